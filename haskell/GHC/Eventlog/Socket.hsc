{-# LANGUAGE CApiFFI #-}
{-# LANGUAGE GeneralizedNewtypeDeriving #-}
{-# LANGUAGE PatternSynonyms #-}

-- |
-- Stream this program's eventlog, live, over a Unix-domain or TCP socket.
--
-- @
-- import qualified GHC.Eventlog.Socket as Eventlog
--
-- main = do
--     Eventlog.startFromEnv   -- GHC_EVENTLOG_UNIX_PATH=\/tmp\/app.sock ...
--     ...
-- @
--
-- Run the program with @+RTS -l@ (link it with @-rtsopts@ or
-- @-with-rtsopts=-l@) and @-threaded@; before GHC 9.4 also link it with
-- @-eventlog@. Starting from Haskell switches the running RTS over to this
-- library's writer: the events written before the switch (start-up, and
-- anything before the call) went to the RTS's own writer (the
-- @PROGRAM.eventlog@ file), not to clients. A custom C main
-- (@eventlog_socket.h@) streams from the first event instead.
--
-- Every name the module of the same name in upstream eventlog-socket 0.1.3
-- exports is here, at upstream's type, so programs written against it
-- compile unchanged, custom control commands and hooks ('registerNamespace',
-- 'registerCommand', 'registerHook' with 'HookPostStartEventLogging' and
-- 'HookPreEndEventLogging') included; what differs in behaviour is listed
-- in README.md, \"Coming from upstream\".
module GHC.Eventlog.Socket
  ( -- * Starting
    startWith,
    EventlogSocketAddr (..),
    EventlogSocketOpts
      ( esoWait,
        esoSndbuf,
        esoLinger,
        esoMaxBuffer,
        esoClientBuffer,
        esoSlowClient,
        esoFlushIntervalMs,
        esoLosslessClients,
        esoLosslessStallMs
      ),
    SlowClientPolicy (..),
    LosslessClients (..),
    defaultEventlogSocketOpts,

    -- * Configuration from the environment
    startFromEnv,
    fromEnv,
    EventlogSocketAddrError (..),

    -- * Monitoring
    stats,
    EventlogSocketStats (..),
    tcpPort,
    testWorkerStatus,
    testControlStatus,

    -- * Custom control commands
    Namespace,
    CommandId (..),
    CommandHandler,
    namespaceName,
    registerNamespace,
    registerCommand,
    EventlogSocketControlError (..),

    -- * Hooks
    Hook (HookPostStartEventLogging, HookPreEndEventLogging),
    HookHandler,
    registerHook,
    -- ** The names of this package's 0.2
    EventlogSocketHook,
    pattern EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
    pattern EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING,

    -- * The first API (a Unix socket path)
    startWait,
    start,
    wait,
  )
where

import Control.Exception (Exception (..), SomeException, catch, throwIO)
import Control.Monad (when)
import Data.Foldable (traverse_)
import Data.Int (Int32)
import Data.Word (Word32, Word64, Word8)
import Foreign.C.String (withCStringLen)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Ptr (FunPtr, freeHaskellFunPtr)
import Foreign.Storable (Storable, peek)
import System.IO (hPutStrLn, stderr)
import Foreign.C.String (CString, peekCString, withCString)
import Foreign.C.Types (CBool (..), CInt (..), CSize (..), CUInt (..))
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (Ptr, nullPtr)
import Foreign.Storable (peekByteOff, pokeByteOff)
import System.Environment (lookupEnv)
import System.IO.Unsafe (unsafePerformIO)

#include "eventlog_socket.h"
#include "es_config.h"

-- | Where to serve the eventlog.
data EventlogSocketAddr
  = -- | A Unix-domain socket at this path (at most 107 bytes), created with
    -- mode 0600 and removed at exit.
    EventlogSocketUnixAddr
      { esaUnixPath :: FilePath
      }
  | -- | TCP. An empty host means 127.0.0.1; port @\"0\"@ picks a free port
    -- (see 'tcpPort').
    EventlogSocketInetAddr
      { esaInetHost :: String,
        esaInetPort :: String
      }
  deriving (Eq, Show)

-- | What a client that falls behind by more than 'esoClientBuffer' gets.
data SlowClientPolicy
  = -- | Whole chunks are skipped for it, with a notice in its stream.
    SlowClientDrop
  | -- | Its connection is closed.
    SlowClientDisconnect
  | -- | Nothing is lost: the program waits for the client, as it would for a
    -- slow disk, and a client that stops reading stops the program until it
    -- reads or disconnects (README, \"Losing nothing\").
    SlowClientWait
  deriving (Eq, Show)

-- | Who may have lossless delivery (a client's request, or every client
-- under 'SlowClientWait'; README, \"Losing nothing\").
data LosslessClients
  = -- | Clients of the program's own user (or root): over the Unix socket,
    -- or from loopback TCP, whose peer's user is checked (the default).
    LosslessOwner
  | -- | Any client that may connect.
    LosslessAll
  | -- | Nobody.
    LosslessNone
  deriving (Eq, Show)

-- | Options; change the fields of 'defaultEventlogSocketOpts'.
data EventlogSocketOpts = EventlogSocketOpts
  { -- | Block 'startWith' until the first client connects.
    esoWait :: Bool,
    -- | Accepted for compatibility with upstream eventlog-socket and
    -- ignored: the library keeps its own, bounded buffers per client.
    esoSndbuf :: Maybe Int32,
    -- | Seconds the program's exit waits at most for slow clients to take
    -- the rest of the stream (default: 2).
    esoLinger :: Maybe Int32,
    -- | Bytes held for all clients together at most, and kept for the first
    -- client before it connects (default 64 MiB, at least 64 KiB).
    esoMaxBuffer :: Word64,
    -- | Unsent bytes one client may fall behind (default 64 MiB).
    esoClientBuffer :: Word64,
    -- | What happens to a client that falls further behind.
    esoSlowClient :: SlowClientPolicy,
    -- | How often (milliseconds) the RTS's buffers are flushed while clients
    -- are connected, GHC 9.2 and later; 'Nothing' for the default (100),
    -- @Just 0@ for never. GHC 9.0 cannot flush: a non-zero value fails.
    esoFlushIntervalMs :: Maybe Int,
    -- | Who may have lossless delivery (default 'LosslessOwner').
    esoLosslessClients :: LosslessClients,
    -- | A lossless client that reads nothing for this many milliseconds
    -- while the program waits for it loses lossless delivery (default
    -- 10000; 0: never).
    esoLosslessStallMs :: Word64
  }
  deriving (Eq, Show)

-- | The library's defaults.
defaultEventlogSocketOpts :: EventlogSocketOpts
defaultEventlogSocketOpts = unsafePerformIO $
  allocaBytes #{size struct eventlog_socket_options} $ \p -> do
    c_options_init p
    maxBuf <- #{peek struct eventlog_socket_options, max_buffer} p :: IO CSize
    clientBuf <- #{peek struct eventlog_socket_options, client_buffer} p :: IO CSize
    slow <- #{peek struct eventlog_socket_options, slow_client} p :: IO CInt
    lossless <- #{peek struct eventlog_socket_options, lossless_clients} p :: IO CInt
    stall <- #{peek struct eventlog_socket_options, lossless_stall_ms} p :: IO CUInt
    pure
      EventlogSocketOpts
        { esoWait = False,
          esoSndbuf = Nothing,
          esoLinger = Nothing,
          esoMaxBuffer = fromIntegral maxBuf,
          esoClientBuffer = fromIntegral clientBuf,
          esoSlowClient =
            if slow == #{const EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT}
              then SlowClientDisconnect
              else
                if slow == #{const EVENTLOG_SOCKET_SLOW_CLIENT_WAIT}
                  then SlowClientWait
                  else SlowClientDrop,
          esoFlushIntervalMs = Nothing,
          esoLosslessClients = losslessFromC lossless,
          esoLosslessStallMs = fromIntegral stall
        }
{-# NOINLINE defaultEventlogSocketOpts #-}

losslessFromC :: CInt -> LosslessClients
losslessFromC v
  | v == #{const EVENTLOG_SOCKET_LOSSLESS_ALL} = LosslessAll
  | v == #{const EVENTLOG_SOCKET_LOSSLESS_NONE} = LosslessNone
  | otherwise = LosslessOwner

-- | Switch the running RTS over to this library's writer and serve the
-- eventlog at the address, run the 'HookPostStartEventLogging' hooks on
-- this thread, then with 'esoWait' block until a client connects.
-- Call it once, early in @main@. Throws an 'IOError' saying what is wrong
-- when it cannot start: the program runs without @+RTS -l@, the socket
-- cannot be made, the library is already serving, an option is invalid.
startWith :: EventlogSocketAddr -> EventlogSocketOpts -> IO ()
startWith addr opts = do
  applyOptions opts
  let waitFlag = if esoWait opts then 1 else 0
  check =<< case addr of
    EventlogSocketUnixAddr path ->
      withCString path $ \cpath -> c_start_unix cpath waitFlag
    EventlogSocketInetAddr host port ->
      withCString host $ \chost ->
        withCString port $ \cport -> c_start_tcp chost cport waitFlag

applyOptions :: EventlogSocketOpts -> IO ()
applyOptions opts = do
  linger <- case esoLinger opts of
    Nothing -> pure Nothing
    Just s
      | s < 0 -> invalid "esoLinger must not be negative"
      | otherwise -> pure (Just (fromIntegral s * 1000 :: CUInt))
  allocaBytes #{size struct eventlog_socket_options} $ \p -> do
    c_options_init p
    #{poke struct eventlog_socket_options, max_buffer} p
      (fromIntegral (esoMaxBuffer opts) :: CSize)
    #{poke struct eventlog_socket_options, client_buffer} p
      (fromIntegral (esoClientBuffer opts) :: CSize)
    #{poke struct eventlog_socket_options, slow_client} p
      ( case esoSlowClient opts of
          SlowClientDrop -> #{const EVENTLOG_SOCKET_SLOW_CLIENT_DROP}
          SlowClientWait -> #{const EVENTLOG_SOCKET_SLOW_CLIENT_WAIT}
          SlowClientDisconnect -> #{const EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT} ::
            CInt
      )
    traverse_ (#{poke struct eventlog_socket_options, linger_ms} p) linger
    #{poke struct eventlog_socket_options, lossless_clients} p
      ( case esoLosslessClients opts of
          LosslessOwner -> #{const EVENTLOG_SOCKET_LOSSLESS_OWNER}
          LosslessAll -> #{const EVENTLOG_SOCKET_LOSSLESS_ALL}
          LosslessNone -> #{const EVENTLOG_SOCKET_LOSSLESS_NONE} ::
            CInt
      )
    when (esoLosslessStallMs opts > 3600000) $
      invalid "esoLosslessStallMs must be at most 3600000"
    #{poke struct eventlog_socket_options, lossless_stall_ms} p
      (fromIntegral (esoLosslessStallMs opts) :: CUInt)
    check =<< c_set_options p
  case esoFlushIntervalMs opts of
    Nothing -> pure ()
    Just ms
      | ms < 0 -> invalid "esoFlushIntervalMs must not be negative"
      | otherwise -> check =<< c_set_flush_interval_ms (fromIntegral ms)
  where
    invalid msg = ioError (userError ("eventlog-socket: " ++ msg))

-- | 'fromEnv', then 'startWith' when a socket is configured; does nothing
-- when none is.
startFromEnv :: IO ()
startFromEnv = fromEnv >>= traverse_ (uncurry startWith)

-- | Read the configuration from the environment variables
-- (@GHC_EVENTLOG_UNIX_PATH@, @GHC_EVENTLOG_INET_HOST@/@_PORT@,
-- @GHC_EVENTLOG_WAIT@, @GHC_EVENTLOG_MAX_BUFFER@, @_CLIENT_BUFFER@,
-- @_SLOW_CLIENT@, @_FLUSH_INTERVAL_MS@, @_LOSSLESS_CLIENTS@,
-- @_LOSSLESS_STALL_MS@; see README.md). 'Nothing' when no
-- socket is configured. Throws 'EventlogSocketAddrError' for a path that is
-- too long or a host without a port, and an 'IOError' for any other invalid
-- value (the message before it names the variable).
fromEnv :: IO (Maybe (EventlogSocketAddr, EventlogSocketOpts))
fromEnv = do
  path <- nonEmpty <$> lookupEnv "GHC_EVENTLOG_UNIX_PATH"
  host <- nonEmpty <$> lookupEnv "GHC_EVENTLOG_INET_HOST"
  port <- nonEmpty <$> lookupEnv "GHC_EVENTLOG_INET_PORT"
  case (path, host, port) of
    (Just p, Nothing, Nothing)
      | utf8Length p > 107 -> throwIO (EventlogSocketAddrUnixPathTooLong p)
    (Nothing, Just h, Nothing) -> throwIO (EventlogSocketAddrInetPortMissing h)
    _ -> pure ()
  allocaBytes #{size struct es_config} $ \p -> do
    c_config_defaults p
    r <- c_config_from_env p
    if r == #{const EVENTLOG_SOCKET_ENOTCONFIGURED}
      then pure Nothing
      else do
        check r
        cpath <- #{peek struct es_config, unix_path} p
        chost <- #{peek struct es_config, inet_host} p
        cport <- #{peek struct es_config, inet_port} p
        waitFlag <- #{peek struct es_config, wait} p :: IO CBool
        flushMs <- #{peek struct es_config, flush_ms} p :: IO CInt
        maxBuf <- #{peek struct es_config, max_buffer} p :: IO CSize
        clientBuf <- #{peek struct es_config, client_limit} p :: IO CSize
        slow <- #{peek struct es_config, slow_client} p :: IO CInt
        lossless <- #{peek struct es_config, lossless_clients} p :: IO CInt
        stall <- #{peek struct es_config, lossless_stall_ms} p :: IO CUInt
        addr <-
          if cpath /= nullPtr
            then EventlogSocketUnixAddr <$> peekCString cpath
            else EventlogSocketInetAddr <$> peekMaybe chost <*> peekMaybe cport
        let d = defaultEventlogSocketOpts
            slowPolicy
              | slow == #{const EVENTLOG_SOCKET_SLOW_CLIENT_DROP} = SlowClientDrop
              | slow == #{const EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT} = SlowClientDisconnect
              | slow == #{const EVENTLOG_SOCKET_SLOW_CLIENT_WAIT} = SlowClientWait
              | otherwise = esoSlowClient d
            opts =
              d
                { esoWait = waitFlag /= 0,
                  esoMaxBuffer = fromIntegral maxBuf,
                  esoClientBuffer = fromIntegral clientBuf,
                  esoSlowClient = slowPolicy,
                  esoFlushIntervalMs = if flushMs < 0 then Nothing else Just (fromIntegral flushMs),
                  esoLosslessClients = losslessFromC lossless,
                  esoLosslessStallMs = fromIntegral stall
                }
        pure (Just (addr, opts))
  where
    nonEmpty (Just "") = Nothing
    nonEmpty v = v
    peekMaybe s = if s == nullPtr then pure "" else peekCString s
    -- Socket paths are limited in bytes; FilePath is encoded as UTF-8 here.
    utf8Length = sum . map charBytes
    charBytes c
      | c < '\x80' = 1
      | c < '\x800' = 2
      | c < '\x10000' = 3
      | otherwise = 4 :: Int

-- | Thrown by 'fromEnv'.
data EventlogSocketAddrError
  = -- | @GHC_EVENTLOG_UNIX_PATH@ is longer than a socket address holds.
    EventlogSocketAddrUnixPathTooLong FilePath
  | -- | Kept for compatibility with upstream; never thrown here, because
    -- the host defaults to 127.0.0.1.
    EventlogSocketAddrInetHostMissing String
  | -- | @GHC_EVENTLOG_INET_HOST@ is set and @GHC_EVENTLOG_INET_PORT@ is not.
    EventlogSocketAddrInetPortMissing String
  deriving (Eq, Show)

instance Exception EventlogSocketAddrError where
  displayException e = case e of
    EventlogSocketAddrUnixPathTooLong p ->
      "GHC_EVENTLOG_UNIX_PATH is " ++ show (length p)
        ++ " characters long; a Unix socket path holds at most 107 bytes: "
        ++ p
    EventlogSocketAddrInetHostMissing port ->
      "GHC_EVENTLOG_INET_PORT is " ++ port ++ " and GHC_EVENTLOG_INET_HOST is not set"
    EventlogSocketAddrInetPortMissing host ->
      "GHC_EVENTLOG_INET_HOST is " ++ host
        ++ " and GHC_EVENTLOG_INET_PORT is not set; set the port too"

-- | The library's counters (see @eventlog_socket_stats@ in the C header).
data EventlogSocketStats = EventlogSocketStats
  { -- | Clients connected now.
    statsClientsConnected :: Word64,
    -- | Clients accepted since the start.
    statsClientsAccepted :: Word64,
    -- | Clients disconnected because they fell behind.
    statsClientsLagged :: Word64,
    -- | Eventlog bytes the RTS handed over.
    statsBytesReceived :: Word64,
    -- | Bytes written to all clients together.
    statsBytesSent :: Word64,
    -- | Chunks skipped, counted once per client that missed them.
    statsChunksDropped :: Word64,
    statsBytesDropped :: Word64,
    -- | Memory held for clients now, and at most so far.
    statsBytesHeld :: Word64,
    statsBytesHeldPeak :: Word64,
    -- | RTS buffer flushes the library made (GHC 9.2 and later), and the
    -- microseconds spent in them.
    statsFlushes :: Word64,
    statsFlushMicros :: Word64,
    -- | Lossless clients connected now; how often a program thread waited
    -- for one, the nanoseconds spent waiting in all, and the longest wait.
    statsClientsLossless :: Word64,
    statsLosslessWaits :: Word64,
    statsLosslessWaitNanos :: Word64,
    statsLosslessWaitMaxNanos :: Word64
  }
  deriving (Eq, Show)

-- | The counters now; 'Nothing' before the library was started. Cheap, from
-- any thread.
stats :: IO (Maybe EventlogSocketStats)
stats = allocaBytes #{size struct eventlog_socket_stats} $ \p -> do
  r <- c_stats p
  if r /= 0
    then pure Nothing
    else
      fmap Just $
        EventlogSocketStats
          <$> #{peek struct eventlog_socket_stats, clients_connected} p
          <*> #{peek struct eventlog_socket_stats, clients_accepted} p
          <*> #{peek struct eventlog_socket_stats, clients_lagged} p
          <*> #{peek struct eventlog_socket_stats, bytes_received} p
          <*> #{peek struct eventlog_socket_stats, bytes_sent} p
          <*> #{peek struct eventlog_socket_stats, chunks_dropped} p
          <*> #{peek struct eventlog_socket_stats, bytes_dropped} p
          <*> #{peek struct eventlog_socket_stats, bytes_held} p
          <*> #{peek struct eventlog_socket_stats, bytes_held_peak} p
          <*> #{peek struct eventlog_socket_stats, flushes} p
          <*> #{peek struct eventlog_socket_stats, flush_us} p
          <*> #{peek struct eventlog_socket_stats, clients_lossless} p
          <*> #{peek struct eventlog_socket_stats, lossless_waits} p
          <*> #{peek struct eventlog_socket_stats, lossless_wait_ns} p
          <*> #{peek struct eventlog_socket_stats, lossless_wait_max_ns} p

-- | The TCP port the library listens on (useful after asking for port
-- @\"0\"@), or 'Nothing' when it does not listen on TCP.
tcpPort :: IO (Maybe Int)
tcpPort = do
  r <- c_tcp_port
  pure (if r < 0 then Nothing else Just (fromIntegral r))

-- | Throw an 'IOError' when the library's socket thread has failed (the
-- error is also logged to stderr when it happens).
testWorkerStatus :: IO ()
testWorkerStatus = check =<< c_last_error

-- | The same as 'testWorkerStatus': control commands are read on the same
-- thread as the one that writes to clients.
testControlStatus :: IO ()
testControlStatus = testWorkerStatus

-- | Serve on a Unix socket and block until the first client connects.
startWait :: FilePath -> IO ()
startWait path = startWith (EventlogSocketUnixAddr path) defaultEventlogSocketOpts {esoWait = True}

-- | Serve on a Unix socket.
start :: FilePath -> IO ()
start path = startWith (EventlogSocketUnixAddr path) defaultEventlogSocketOpts

-- | Block until the first client has connected (at once if one has, even
-- if it has left since). Throws an 'IOError' when the library was not
-- started or has stopped.
wait :: IO ()
wait = check =<< c_wait

check :: CInt -> IO ()
check r = when (r < 0) $ do
  msg <- peekCString =<< c_strerror r
  ioError (userError ("eventlog-socket: " ++ msg))

-- The options and stats structs are opaque here: hsc2hs gives their layout.
data Options

data Stats

data EnvConfig

-- ---------------------------------------------------------------------------
-- Custom control commands and hooks

-- | A namespace of control commands, from 'registerNamespace'.
newtype Namespace = Namespace (Ptr ())

-- | A command's id in its namespace, 1 to 255.
newtype CommandId = CommandId Word8
  deriving (Eq, Show)

-- | What runs when a client sends the command. It runs on a thread of the
-- library's (one per namespace, so a slow handler holds up only its own
-- namespace's commands), never while the RTS is starting or exiting. An
-- exception it throws is printed to stderr and otherwise ignored.
type CommandHandler = IO ()

-- | The errors of 'registerNamespace' and 'registerCommand'.
data EventlogSocketControlError
  = -- | The name, its length in bytes and the most allowed (255).
    EventlogSocketControlNamespaceTooLong String Int Int
  | -- | The name is registered already, or is the reserved
    -- @eventlog-socket@.
    EventlogSocketControlNamespaceExists String
  | -- | The namespace's name and the id that is registered already.
    EventlogSocketControlCommandExists String CommandId
  | -- | Never thrown by this library (control commands are always
    -- supported); kept for upstream's programs.
    EventlogSocketControlUnsupported
  deriving (Eq, Show)

instance Exception EventlogSocketControlError where
  displayException e = case e of
    EventlogSocketControlNamespaceTooLong name len most ->
      "the namespace name " ++ show name ++ " is " ++ show len
        ++ " bytes long; at most " ++ show most ++ " are allowed"
    EventlogSocketControlNamespaceExists name ->
      "the namespace " ++ show name ++ " is registered already"
        ++ (if name == "eventlog-socket" then " (it is the library's own)" else "")
    EventlogSocketControlCommandExists name (CommandId i) ->
      "command " ++ show i ++ " of namespace " ++ show name ++ " is registered already"
    EventlogSocketControlUnsupported ->
      "control commands are not supported (never thrown by this library)"

-- | The name a namespace was registered with.
namespaceName :: Namespace -> IO String
namespaceName (Namespace p) = c_namespace_name p >>= peekCString

-- | Register a namespace for control commands. Use your package's name, to
-- stay clear of others.
registerNamespace :: String -> IO Namespace
registerNamespace name = withCStringLen name $ \(p, len) ->
  if len > 255
    then throwIO (EventlogSocketControlNamespaceTooLong name len 255)
    else alloca $ \out -> do
      r <- c_register_namespace p (fromIntegral len) out
      case r of
        0 -> Namespace <$> peek out
        _
          | r == #{const EVENTLOG_SOCKET_EEXIST} || name == "eventlog-socket" ->
              throwIO (EventlogSocketControlNamespaceExists name)
          | otherwise -> throwError "registerNamespace" r

-- | Register a command of a namespace: a client sending (namespace, id) in
-- upstream framing makes @handler@ run.
registerCommand :: Namespace -> CommandId -> CommandHandler -> IO ()
registerCommand ns@(Namespace p) cid@(CommandId i) handler = do
  name <- namespaceName ns
  let label = name ++ "/" ++ show i
  fp <- mkCommandFn (\_ _ _ -> guarded ("command " ++ label) handler)
  r <- c_register_command p i fp nullPtr
  when (r /= 0) $ do
    freeHaskellFunPtr fp
    if r == #{const EVENTLOG_SOCKET_EEXIST}
      then throwIO (EventlogSocketControlCommandExists name cid)
      else throwError "registerCommand" r

-- | When a hook runs (see 'registerHook'): 'HookPostStartEventLogging' or
-- 'HookPreEndEventLogging'.
newtype Hook = Hook {unHook :: #{type EventlogSocketHook}}
  deriving (Eq, Show, Storable)

-- | Once event logging runs: for a Haskell @main@, inside 'startWith' (and
-- 'startFromEnv', 'start', 'startWait'), on the calling thread, before it
-- returns; for a C @main@, on the main thread before @main@ starts. Register
-- the hook before that. The first client gets what the hook posted then
-- (it gets the stream from its start); each later client gets a run of its
-- own, after it has joined, on a thread of the library's, so what the hook
-- posts (your own start-up messages, say) reaches it. A hook registered
-- after the start runs once at registration, then for each later client.
pattern HookPostStartEventLogging :: Hook
pattern HookPostStartEventLogging = Hook #{const EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING}

-- | At the beginning of the program's exit, while clients still receive
-- events. Event logging ends only then: a client coming or going ends
-- nothing.
pattern HookPreEndEventLogging :: Hook
pattern HookPreEndEventLogging = Hook #{const EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING}

{-# COMPLETE HookPostStartEventLogging, HookPreEndEventLogging #-}

-- | The name of 'Hook' in this package's 0.2.
type EventlogSocketHook = Hook

-- | 'HookPostStartEventLogging', by its name in this package's 0.2.
pattern EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING :: Hook
pattern EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING = HookPostStartEventLogging

-- | 'HookPreEndEventLogging', by its name in this package's 0.2.
pattern EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING :: Hook
pattern EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING = HookPreEndEventLogging

-- | What a hook runs; an exception it throws is printed to stderr and the
-- program goes on. It must not call this module's functions.
type HookHandler = IO ()

-- | Run @handler@ at @hook@, after the handlers registered before it.
-- Hooks cannot be unregistered.
registerHook :: Hook -> HookHandler -> IO ()
registerHook hook@(Hook h) handler = do
  let label = case hook of
        HookPostStartEventLogging -> "POST_START"
        HookPreEndEventLogging -> "PRE_END"
  fp <- mkHookFn (\_ -> guarded ("hook " ++ label) handler)
  r <- c_add_hook h fp nullPtr
  when (r /= 0) $ freeHaskellFunPtr fp >> throwError "registerHook" r

-- | A handler's exception must not escape into the library's thread (the
-- RTS would end the program): print it instead.
guarded :: String -> IO () -> IO ()
guarded what act =
  act `catch` \e ->
    hPutStrLn stderr ("eventlog-socket: " ++ what ++ " failed: " ++ show (e :: SomeException))

throwError :: String -> CInt -> IO a
throwError what r = do
  msg <- c_strerror r >>= peekCString
  ioError (userError (what ++ ": " ++ msg))

type CommandFn = Ptr () -> Word8 -> Ptr () -> IO ()

type HookFn = Ptr () -> IO ()

foreign import ccall "wrapper" mkCommandFn :: CommandFn -> IO (FunPtr CommandFn)

foreign import ccall "wrapper" mkHookFn :: HookFn -> IO (FunPtr HookFn)

foreign import ccall safe "eventlog_socket_register_namespace"
  c_register_namespace :: CString -> CSize -> Ptr (Ptr ()) -> IO CInt

foreign import ccall safe "eventlog_socket_register_command"
  c_register_command :: Ptr () -> Word8 -> FunPtr CommandFn -> Ptr () -> IO CInt

foreign import ccall safe "eventlog_socket_add_hook"
  c_add_hook :: #{type EventlogSocketHook} -> FunPtr HookFn -> Ptr () -> IO CInt

foreign import ccall unsafe "eventlog_socket_namespace_name"
  c_namespace_name :: Ptr () -> IO CString

foreign import ccall unsafe "eventlog_socket_error_message"
  c_strerror :: CInt -> IO CString

foreign import ccall unsafe "eventlog_socket_options_init"
  c_options_init :: Ptr Options -> IO ()

foreign import ccall safe "eventlog_socket_set_options"
  c_set_options :: Ptr Options -> IO CInt

foreign import ccall safe "eventlog_socket_set_flush_interval_ms"
  c_set_flush_interval_ms :: CUInt -> IO CInt

-- Safe calls: they stop and start event logging, and may wait for a client;
-- the calling thread must not hold a capability meanwhile.
foreign import capi safe "eventlog_socket.h eventlog_socket_start_unix"
  c_start_unix :: CString -> CBool -> IO CInt

foreign import capi safe "eventlog_socket.h eventlog_socket_start_tcp"
  c_start_tcp :: CString -> CString -> CBool -> IO CInt

foreign import ccall safe "eventlog_socket_wait_for_client"
  c_wait :: IO CInt

foreign import ccall unsafe "eventlog_socket_stats"
  c_stats :: Ptr Stats -> IO CInt

foreign import ccall unsafe "eventlog_socket_tcp_port"
  c_tcp_port :: IO CInt

foreign import ccall unsafe "eventlog_socket_last_error"
  c_last_error :: IO CInt

-- The library's own configuration reader (cbits/es_config.h): the defaults,
-- then the environment on top, with the same messages as the C API.
foreign import ccall unsafe "es_config_defaults"
  c_config_defaults :: Ptr EnvConfig -> IO ()

foreign import ccall safe "es_config_from_env"
  c_config_from_env :: Ptr EnvConfig -> IO CInt
