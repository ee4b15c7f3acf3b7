-- SPDX-License-Identifier: BSD-3-Clause
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
-- in docs/upstream.md.
--
-- Every function is called on the program's own threads (any of them);
-- command and hook handlers run on threads of the library's.
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
        esoLosslessStallMs,
        esoLingerMaxMs,
        esoControlIntervalMs,
        esoMaxClients,
        esoAllowOtherUsers,
        esoRetainBytes,
        esoRetainSeconds,
        esoDumpOnFailure
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

    -- * Spans
    withSpan,

    -- * Event classes
    EventClass (..),
    eventClassesOn,
    switchableEventClasses,
    switchEventClasses,

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

-- This module starts the library and reads its counters; the rest is in
-- internal modules (other-modules, not exposed), re-exported above:
-- Internal.Config (the address and options types, the options handed to C,
-- the environment), Internal.Control (custom commands and hooks),
-- Internal.Foreign (every foreign import, and C errors as exceptions).

import Control.Exception (mask, onException)
import Data.Foldable (traverse_)
import Debug.Trace (traceEventIO)
import Data.Bits (shiftL, (.&.), (.|.))
import Data.Word (Word64)
import Foreign.C.String (withCString)
import Foreign.C.Types (CUInt)
import Foreign.Marshal.Alloc (alloca, allocaBytes)
import Foreign.Ptr (nullPtr)
import Foreign.Storable (peek, peekByteOff)
import GHC.Eventlog.Socket.Internal.Config
import GHC.Eventlog.Socket.Internal.Control
import GHC.Eventlog.Socket.Internal.Foreign

#include "eventlog_socket.h"

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
  (r, why) <- refusable $ case addr of
    EventlogSocketUnixAddr path ->
      \buf n -> withCString path $ \cpath -> c_start_unix cpath waitFlag buf n
    EventlogSocketInetAddr host port ->
      \buf n -> withCString host $ \chost ->
        withCString port $ \cport -> c_start_tcp chost cport waitFlag buf n
  checkWith why r


-- | 'fromEnv', then 'startWith' when a socket is configured; does nothing
-- when none is.
startFromEnv :: IO ()
startFromEnv = fromEnv >>= traverse_ (uncurry startWith)

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
    statsLosslessWaitMaxNanos :: Word64,
    -- | The flight recorder: bytes in the window now (also in
    -- 'statsBytesHeld'), and how many clients were sent it.
    statsWindowBytes :: Word64,
    statsWindowsSent :: Word64,
    -- | Clients turned away at the client limit or the descriptor reserve.
    statsClientsRefused :: Word64,
    -- | What streaming cost the program in CPU time (nanoseconds): its own
    -- threads inside the RTS's eventlog writer (the copy), the library's
    -- walker thread and its socket thread.
    statsCpuNanosWriter :: Word64,
    statsCpuNanosWalker :: Word64,
    statsCpuNanosLoop :: Word64,
    -- | Chunks (and their bytes) lost before any client got them: the
    -- hand-off from the RTS was full, or memory ran out. Every client gets
    -- a drop notice where they are missing.
    statsChunksLost :: Word64,
    statsBytesLost :: Word64
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
          <*> #{peek struct eventlog_socket_stats, window_bytes} p
          <*> #{peek struct eventlog_socket_stats, windows_sent} p
          <*> #{peek struct eventlog_socket_stats, clients_refused} p
          <*> #{peek struct eventlog_socket_stats, cpu_ns_writer} p
          <*> #{peek struct eventlog_socket_stats, cpu_ns_walker} p
          <*> #{peek struct eventlog_socket_stats, cpu_ns_loop} p
          <*> #{peek struct eventlog_socket_stats, chunks_lost} p
          <*> #{peek struct eventlog_socket_stats, bytes_lost} p

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

-- | Run the action as a span named by the label: the program posts
-- @START label@ before it and @STOP label@ after it (user messages, as
-- 'traceEventIO' posts them: ghc-events-analyse's convention), and when
-- an exception ends it, synchronous or asynchronous, @FAIL label@ then
-- @STOP label@ before the exception goes on. @eventlog-socket table
-- spans@, @serve@, @report@ and @metrics@ measure them per thread and per
-- label, and mark the failed ones (protocol.md, \"Spans\"). Spans nest;
-- a label is its text up to its first NUL, at most 200 bytes of it, and
-- an empty one makes no span. The program needs @+RTS -l@ with user
-- events (the default classes), as 'traceEventIO' does; without it the
-- action runs alone.
withSpan :: String -> IO a -> IO a
withSpan label act = mask $ \restore -> do
  traceEventIO ("START " ++ label)
  r <- restore act `onException` (traceEventIO ("FAIL " ++ label) >> traceEventIO ("STOP " ++ label))
  traceEventIO ("STOP " ++ label)
  pure r

-- | A class of the RTS's events, as @+RTS -l@'s letters choose them at
-- start: 'Scheduler' (@s@: threads run, stop, migrate), 'GC' (@g@:
-- collections, heap sizes), 'NonmovingGC' (@n@: the nonmoving heap's
-- census), 'SparksSampled' (@p@: spark counters), 'SparksFull' (@f@: every
-- spark event), 'User' (@u@: 'Debug.Trace.traceEventIO', markers, and so
-- 'withSpan').
data EventClass = Scheduler | GC | NonmovingGC | SparksSampled | SparksFull | User
  deriving (Eq, Ord, Show, Read, Enum, Bounded)

classBit :: EventClass -> CUInt
classBit c = 1 `shiftL` fromEnum c

classMask :: [EventClass] -> CUInt
classMask = foldr ((.|.) . classBit) 0

classesOf :: CUInt -> [EventClass]
classesOf m = [c | c <- [minBound .. maxBound], m .&. classBit c /= 0]

-- | The event classes on now.
eventClassesOn :: IO [EventClass]
eventClassesOn = alloca $ \on -> do
  _ <- c_event_classes on nullPtr
  classesOf <$> peek on

-- | The event classes this program can switch: all of them in a program
-- linked statically with GHC 9.0, 9.6 to 9.10; none in one linked with
-- @-dynamic@ (its RTS keeps its switches to itself).
switchableEventClasses :: IO [EventClass]
switchableEventClasses = alloca $ \can -> do
  _ <- c_event_classes nullPtr can
  classesOf <$> peek can

-- | @switchEventClasses on off@: switch the classes @on@ on and @off@ off
-- while the program runs (a class in both is switched off). The RTS posts
-- their events from its next ones on; every client's stream gets a notice
-- of the switch, so that no view takes the gap for an idle program. Throws
-- an 'IOError' saying which class and why when one cannot be switched in
-- this program (nothing is switched then), or before the library started.
switchEventClasses :: [EventClass] -> [EventClass] -> IO ()
switchEventClasses on off = do
  let offMask = classMask off
      onMask = classMask on .&. complementMask offMask
  (r, why) <- refusable (c_switch_event_classes onMask offMask)
  checkWith why r
  where
    complementMask m = 63 - (m .&. 63)
