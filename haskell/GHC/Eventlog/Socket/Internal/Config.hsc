-- SPDX-License-Identifier: BSD-3-Clause
-- |
-- The options of "GHC.Eventlog.Socket": the address and options types, the
-- library's defaults read from the C side, the options handed to the C
-- side before a start ('applyOptions'), and the configuration read from
-- the environment ('fromEnv'). Internal: not exposed; "GHC.Eventlog.Socket"
-- re-exports what users see.
--
-- Thread: the program's own, the one that calls the public function.
module GHC.Eventlog.Socket.Internal.Config
  ( EventlogSocketAddr (..),
    SlowClientPolicy (..),
    LosslessClients (..),
    EventlogSocketOpts (..),
    defaultEventlogSocketOpts,
    applyOptions,
    fromEnv,
    EventlogSocketAddrError (..),
  )
where

import Control.Exception (Exception (..), throwIO)
import Control.Monad (when)
import Data.Foldable (traverse_)
import Data.Int (Int32)
import Data.Maybe (isJust)
import Data.Word (Word64)
import Foreign.C.String (peekCString, withCString)
import Foreign.C.Types (CBool (..), CChar, CInt (..), CSize (..), CUInt (..))
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (Ptr, nullPtr, plusPtr)
import Foreign.Storable (peekByteOff, pokeByteOff)
import GHC.Eventlog.Socket.Internal.Foreign
import System.Environment (lookupEnv)
import System.IO.Unsafe (unsafePerformIO)

#include "eventlog_socket.h"
#include "base/es_config.h"

-- | Where to serve the eventlog.
data EventlogSocketAddr
  = -- | A Unix-domain socket at this path (at most 107 bytes), created with
    -- mode 0600 and removed at exit.
    EventlogSocketUnixAddr
      { esaUnixPath :: FilePath
      }
  | -- | TCP. An empty host means 127.0.0.1; port @\"0\"@ picks a free port
    -- (see 'GHC.Eventlog.Socket.tcpPort').
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
    -- reads or disconnects (docs/performance.md, \"Losing nothing\").
    SlowClientWait
  deriving (Eq, Show)

-- | Who may have lossless delivery (a client's request, or every client
-- under 'SlowClientWait'; docs/performance.md, \"Losing nothing\").
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
  { -- | Block 'GHC.Eventlog.Socket.startWith' until the first client
    -- connects.
    esoWait :: Bool,
    -- | Accepted for compatibility with upstream eventlog-socket and
    -- ignored: the library keeps its own, bounded buffers per client.
    esoSndbuf :: Maybe Int32,
    -- | Seconds the program's exit waits for every client that keeps
    -- reading to take the rest of the stream (default: 2; see
    -- 'esoLingerMaxMs' for clients that are still draining then).
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
    esoLosslessStallMs :: Word64,
    -- | Past 'esoLinger', exit waits for a client only while its pace would
    -- bring it to the end of its stream within this many milliseconds of
    -- the exit's start, and never longer (default 10000; at most 600000).
    esoLingerMaxMs :: Word64,
    -- | Control commands that cost the program (a heap census, starting or
    -- stopping profiling) act at most once per this many milliseconds
    -- (default 1000; 0: no limit; at most 60000).
    esoControlIntervalMs :: Word64,
    -- | Clients served at once; one more is refused (default 1024).
    esoMaxClients :: Word64,
    -- | TCP only: serve clients of every user of this machine, not only the
    -- program's own user and root (default 'False').
    esoAllowOtherUsers :: Bool,
    -- | The flight recorder (README, \"Flight recorder\"): keep the most
    -- recent this many bytes of the eventlog at all times, for a client
    -- that asks for them later (0, the default: no window; else at least
    -- 64 KiB).
    esoRetainBytes :: Word64,
    -- | At most this many seconds of the program's time in the window (0,
    -- the default: no limit; needs 'esoRetainBytes').
    esoRetainSeconds :: Word64,
    -- | When the program exits with a non-zero status, write the window to
    -- this file (@%p@: the pid, @%t@: the time; needs 'esoRetainBytes').
    esoDumpOnFailure :: Maybe FilePath
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
    lingerMax <- #{peek struct eventlog_socket_options, linger_max_ms} p :: IO CUInt
    control <- #{peek struct eventlog_socket_options, control_interval_ms} p :: IO CUInt
    clients <- #{peek struct eventlog_socket_options, max_clients} p :: IO CUInt
    others <- #{peek struct eventlog_socket_options, allow_other_users} p :: IO CInt
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
          esoLosslessStallMs = fromIntegral stall,
          esoLingerMaxMs = fromIntegral lingerMax,
          esoControlIntervalMs = fromIntegral control,
          esoMaxClients = fromIntegral clients,
          esoAllowOtherUsers = others /= 0,
          esoRetainBytes = 0,
          esoRetainSeconds = 0,
          esoDumpOnFailure = Nothing
        }
{-# NOINLINE defaultEventlogSocketOpts #-}

losslessFromC :: CInt -> LosslessClients
losslessFromC v
  | v == #{const EVENTLOG_SOCKET_LOSSLESS_ALL} = LosslessAll
  | v == #{const EVENTLOG_SOCKET_LOSSLESS_NONE} = LosslessNone
  | otherwise = LosslessOwner

-- | Hand the options to the C side ('GHC.Eventlog.Socket.startWith' does,
-- before it starts); throws an 'IOError' for an invalid one.
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
    when (esoLingerMaxMs opts > 600000) $
      invalid "esoLingerMaxMs must be at most 600000"
    #{poke struct eventlog_socket_options, linger_max_ms} p
      (fromIntegral (esoLingerMaxMs opts) :: CUInt)
    when (esoControlIntervalMs opts > 60000) $
      invalid "esoControlIntervalMs must be at most 60000"
    #{poke struct eventlog_socket_options, control_interval_ms} p
      (fromIntegral (esoControlIntervalMs opts) :: CUInt)
    when (esoMaxClients opts == 0 || esoMaxClients opts > 0xffffffff) $
      invalid "esoMaxClients must be at least 1"
    #{poke struct eventlog_socket_options, max_clients} p
      (fromIntegral (esoMaxClients opts) :: CUInt)
    #{poke struct eventlog_socket_options, allow_other_users} p
      (if esoAllowOtherUsers opts then 1 else 0 :: CInt)
    when (esoRetainSeconds opts > 604800) $
      invalid "esoRetainSeconds must be at most 604800 (a week)"
    when (esoRetainBytes opts /= 0 && esoRetainBytes opts < 65536) $
      invalid "esoRetainBytes must be 0 (no window) or at least 65536 (64 KiB)"
    -- Unlike the variables, the fields have no "unset": a dump or an age
    -- with esoRetainBytes 0 asks for a window that is turned off.
    when (esoRetainBytes opts == 0 && (esoRetainSeconds opts /= 0 || isJust (esoDumpOnFailure opts))) $
      invalid
        ( "esoDumpOnFailure and esoRetainSeconds need a window: set esoRetainBytes too "
            ++ "(for example 64 MiB, what GHC_EVENTLOG_DUMP_ON_FAILURE alone keeps)"
        )
    #{poke struct eventlog_socket_options, retain_bytes} p
      (fromIntegral (esoRetainBytes opts) :: CSize)
    #{poke struct eventlog_socket_options, retain_seconds} p
      (fromIntegral (esoRetainSeconds opts) :: CUInt)
    -- The C side copies the name before this returns.
    withMaybeCString (esoDumpOnFailure opts) $ \dump -> do
      #{poke struct eventlog_socket_options, dump_on_failure} p dump
      uncurry (flip checkWith) =<< refusable (c_set_options p)
  case esoFlushIntervalMs opts of
    Nothing -> pure ()
    Just ms
      | ms < 0 -> invalid "esoFlushIntervalMs must not be negative"
      | otherwise -> check =<< c_set_flush_interval_ms (fromIntegral ms)
  where
    invalid msg = ioError (userError ("eventlog-socket: " ++ msg))
    withMaybeCString Nothing k = k nullPtr
    withMaybeCString (Just path) k = withCString path k

-- | Read the configuration from the environment variables
-- (@GHC_EVENTLOG_UNIX_PATH@, @GHC_EVENTLOG_INET_HOST@/@_PORT@,
-- @GHC_EVENTLOG_WAIT@, @GHC_EVENTLOG_MAX_BUFFER@, @_CLIENT_BUFFER@,
-- @_SLOW_CLIENT@, @_FLUSH_INTERVAL_MS@, @_LOSSLESS_CLIENTS@,
-- @_LOSSLESS_STALL_MS@, @_LINGER_MS@ (as whole seconds, rounded up),
-- @_LINGER_MAX_MS@, @_CONTROL_INTERVAL_MS@, @_MAX_CLIENTS@,
-- @_ALLOW_OTHER_USERS@, @_RETAIN@, @_RETAIN_SECONDS@, @_DUMP_ON_FAILURE@; see
-- docs/configuration.md). 'Nothing' when no
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
    (r, why) <- refusable (c_config_from_env p)
    if r == #{const EVENTLOG_SOCKET_ENOTCONFIGURED}
      then pure Nothing
      else do
        checkWith why r
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
        retain <- #{peek struct es_config, retain} p :: IO CSize
        retainSecs <- #{peek struct es_config, retain_seconds} p :: IO CUInt
        dump <- peekCString (#{ptr struct es_config, dump_on_failure} p :: Ptr CChar)
        lingerMs <- #{peek struct es_config, linger_ms} p :: IO CUInt
        lingerMax <- #{peek struct es_config, linger_max_ms} p :: IO CUInt
        control <- #{peek struct es_config, control_interval_ms} p :: IO CUInt
        clients <- #{peek struct es_config, max_clients} p :: IO CUInt
        others <- #{peek struct es_config, allow_other_users} p :: IO CBool
        lingerSet <- nonEmpty <$> lookupEnv "GHC_EVENTLOG_LINGER_MS"
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
                  esoLosslessStallMs = fromIntegral stall,
                  esoLinger = (fromIntegral ((lingerMs + 999) `div` 1000) <$ lingerSet),
                  esoLingerMaxMs = fromIntegral lingerMax,
                  esoControlIntervalMs = fromIntegral control,
                  esoMaxClients = fromIntegral clients,
                  esoAllowOtherUsers = others /= 0,
                  esoRetainBytes = fromIntegral retain,
                  esoRetainSeconds = fromIntegral retainSecs,
                  esoDumpOnFailure = if null dump then Nothing else Just dump
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

