-- SPDX-License-Identifier: BSD-3-Clause
{-# LANGUAGE ForeignFunctionInterface #-}

-- | ghc-eventlog-socket's own test-suite, what @cabal test@ runs from the release
-- tarball: the module's API against the real library, in one program run
-- with @+RTS -l@. Configuration from the environment and its errors;
-- custom command registration and its errors; a POST_START hook run once
-- inside 'startWith'; a client of the Unix socket (client.c) that gets a
-- stream opening with the eventlog header and carrying the program's
-- markers; a custom command sent by that client runs its handler; the
-- counters see the client; the event classes read and switched. Prints TAP
-- and a closing "N passed, N failed".
module Main (main) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar (newEmptyMVar, tryPutMVar, tryTakeMVar)
import Control.Exception (SomeException, try)
import Control.Monad (forM_, unless, void)
import Data.IORef (IORef, atomicModifyIORef', modifyIORef', newIORef, readIORef)
import Data.List (isInfixOf, isPrefixOf)
import Debug.Trace (traceMarkerIO)
import Foreign.C.String (CString, castCCharToChar, castCharToCChar, withCString)
import Foreign.C.Types (CChar, CInt (..), CLong (..))
import Foreign.Marshal.Array (allocaArray, peekArray, withArrayLen)
import Foreign.Ptr (Ptr)
import GHC.Eventlog.Socket
import System.Directory (createDirectory, getTemporaryDirectory, removeDirectoryRecursive)
import System.Environment (setEnv, unsetEnv)
import System.Exit (exitFailure)
import System.IO (BufferMode (LineBuffering), hSetBuffering, stdout)
import System.Posix.Process (getProcessID)

foreign import ccall safe "tap_connect" c_connect :: CString -> IO CInt

foreign import ccall safe "tap_read_until" c_read_until :: CInt -> CString -> CInt -> Ptr CChar -> IO CLong

foreign import ccall safe "tap_send" c_send :: CInt -> Ptr CChar -> CInt -> IO CInt

foreign import ccall safe "tap_close" c_close :: CInt -> IO ()

-- | TAP, counted in an IORef of (passed, failed).
check :: IORef (Int, Int) -> String -> Bool -> IO ()
check counts what good = do
  modifyIORef' counts (\(p, f) -> if good then (p + 1, f) else (p, f + 1))
  (p, f) <- readIORef counts
  putStrLn ((if good then "ok " else "not ok ") ++ show (p + f) ++ " - " ++ what)

-- | The exception an action throws, shown; or "no exception".
thrown :: IO a -> IO String
thrown act = either (\e -> show (e :: SomeException)) (const "no exception") <$> try act

main :: IO ()
main = do
  hSetBuffering stdout LineBuffering
  counts <- newIORef (0, 0)
  let ok = check counts

  before <- stats
  ok "stats is Nothing before a start" (null before)

  -- Configuration from the environment, as the C library reads it.
  forM_ ["GHC_EVENTLOG_UNIX_PATH", "GHC_EVENTLOG_INET_HOST", "GHC_EVENTLOG_INET_PORT"] unsetEnv
  none <- fromEnv
  ok "fromEnv without a socket variable: Nothing" (null none)
  setEnv "GHC_EVENTLOG_INET_HOST" "127.0.0.1"
  noPort <- thrown fromEnv
  ok ("fromEnv with a host and no port throws: " ++ noPort) ("EventlogSocketAddrInetPortMissing" `isPrefixOf` noPort)
  unsetEnv "GHC_EVENTLOG_INET_HOST"
  setEnv "GHC_EVENTLOG_UNIX_PATH" ('/' : replicate 200 'x')
  tooLong <- thrown fromEnv
  ok "fromEnv with a 201-byte path throws EventlogSocketAddrUnixPathTooLong" ("EventlogSocketAddrUnixPathTooLong" `isPrefixOf` tooLong)
  setEnv "GHC_EVENTLOG_UNIX_PATH" "/tmp/a.sock"
  setEnv "GHC_EVENTLOG_MAX_BUFFER" "1M"
  configured <- fromEnv
  ok "fromEnv reads the path and the options" $ case configured of
    Just (EventlogSocketUnixAddr "/tmp/a.sock", opts) -> esoMaxBuffer opts == 1048576
    _ -> False
  mapM_ unsetEnv ["GHC_EVENTLOG_UNIX_PATH", "GHC_EVENTLOG_MAX_BUFFER"]

  -- Custom commands and hooks, registered before the start.
  reserved <- thrown (registerNamespace "eventlog-socket")
  ok ("the library's own namespace is refused: " ++ reserved) ("EventlogSocketControlNamespaceExists" `isPrefixOf` reserved)
  ns <- registerNamespace "tap-test"
  ran <- newEmptyMVar
  registerCommand ns (CommandId 1) (void (tryPutMVar ran ()))
  again <- thrown (registerCommand ns (CommandId 1) (pure ()))
  ok ("a command id registered twice is refused: " ++ again) ("EventlogSocketControlCommandExists" `isPrefixOf` again)
  postStarts <- newIORef (0 :: Int)
  registerHook HookPostStartEventLogging (atomicModifyIORef' postStarts (\n -> (n + 1, ())))

  -- Start on a Unix socket of our own directory.
  tmp <- getTemporaryDirectory
  pid <- getProcessID
  let dir = tmp ++ "/ghc-eventlog-socket-test-" ++ show pid
      path = dir ++ "/s.sock"
  createDirectory dir
  startWith (EventlogSocketUnixAddr path) defaultEventlogSocketOpts
  hooks <- readIORef postStarts
  ok ("the POST_START hook ran once inside startWith (" ++ show hooks ++ ")") (hooks == 1)

  fd <- withCString path c_connect
  ok "a client connects to the socket" (fd >= 0)
  -- Markers until the client has seen one: 2 MiB and more of them, so
  -- that a GHC that cannot flush (9.0) hands its buffer over too.
  stop <- newIORef False
  _ <- forkIO $
    let go :: Int -> IO ()
        go i = do
          done <- readIORef stop
          unless (done || i > 400000) $ traceMarkerIO ("tap-test marker " ++ show i) >> go (i + 1)
     in go 0
  (got, first4) <- allocaArray 4 $ \buf -> do
    n <- withCString "tap-test marker 1" $ \needle -> c_read_until fd needle 60000 buf
    bytes <- peekArray 4 buf
    pure (n, map castCCharToChar bytes)
  modifyIORef' stop (const True)
  ok ("the stream opens with the eventlog header (" ++ show first4 ++ ")") (got > 0 && first4 == "hdrb")
  ok ("the program's markers reach the client (" ++ show got ++ " bytes)") (got > 0)

  -- The client sends tap-test/1 in upstream's framing.
  -- The magic bytes, protocol 0, the namespace's length and name, the id.
  let frame = map toEnum ([0xf0, 0x9e, 0x97, 0x8c, 0, 8] ++ map fromEnum "tap-test" ++ [1])
  sent <- withArrayLen (map castCharToCChar frame) $ \n p -> c_send fd p (fromIntegral n)
  let waitRan :: Int -> IO Bool
      waitRan 0 = pure False
      waitRan k = tryTakeMVar ran >>= maybe (threadDelay 10000 >> waitRan (k - 1)) (const (pure True))
  commandRan <- waitRan 3000
  ok "a custom command sent by the client runs its handler" (sent == 0 && commandRan)

  after <- stats
  ok "stats counts the client" (maybe False ((>= 1) . statsClientsAccepted) after)
  -- The markers went through the RTS's writer into the library: that
  -- copy took CPU time, and nothing was lost on the way.
  ok ("stats counts the writer's CPU time and no loss (" ++ show (fmap statsCpuNanosWriter after) ++ " ns)")
    (maybe False (\s -> statsCpuNanosWriter s > 0 && statsChunksLost s == 0 && statsBytesLost s == 0) after)
  c_close fd
  removeDirectoryRecursive dir

  -- Event classes: the test-suite runs with +RTS -l (s, g, p and u on).
  atStart <- eventClassesOn
  ok ("eventClassesOn under +RTS -l: " ++ show atStart) (atStart == [Scheduler, GC, SparksSampled, User])
  can <- switchableEventClasses
  if can == [minBound .. maxBound]
    then do
      switchEventClasses [SparksFull] [Scheduler]
      switched <- eventClassesOn
      ok ("switchEventClasses [SparksFull] [Scheduler]: " ++ show switched)
        (switched == [GC, SparksSampled, SparksFull, User])
      switchEventClasses [Scheduler] [SparksFull]
      back <- eventClassesOn
      ok ("and back: " ++ show back) (back == atStart)
    else do
      -- A program linked with -dynamic: its RTS keeps its switches.
      refused <- thrown (switchEventClasses [] [Scheduler])
      ok ("no class switchable (" ++ show can ++ "), and a switch says why: " ++ refused)
        (null can && "-dynamic" `isInfixOf` refused)

  (passed, failed) <- readIORef counts
  putStrLn ("1.." ++ show (passed + failed))
  putStrLn (show passed ++ " passed, " ++ show failed ++ " failed")
  unless (failed == 0) exitFailure
