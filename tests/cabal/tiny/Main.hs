-- SPDX-License-Identifier: BSD-3-Clause
-- | tiny stream PATH N: serve on PATH, wait for a client, post N markers
-- ("tiny 1".."tiny N"), print the library's counters.
-- tiny live PATH GO: serve on PATH, wait for a client, post the marker
-- "live 1", then wait (60 s at most) for the file GO, which the test creates
-- once the marker reached the client; print "go" or "no go".
-- tiny env: print what fromEnv makes of the environment.
-- tiny fromenv GO: startFromEnv, then wait (60 s at most) for the file GO.
-- tiny custom PATH: register the namespace "tiny" (command 1 posts "tiny
-- custom 1" and lets the program end, command 2 throws) and a POST_START
-- hook, try the registrations that must fail, serve on PATH and wait (30 s
-- at most) for command 1.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, tryTakeMVar)
import Control.Exception (throwIO)
import Control.Exception (try)
import Control.Monad (forM_)
import System.Directory (doesFileExist)
import Debug.Trace (traceMarkerIO)
import GHC.Eventlog.Socket
import System.Environment (getArgs)
import System.Exit (exitWith, ExitCode (..))

-- Upstream 0.1.3's signatures: this only compiles if ours match.
upstream ::
  ( EventlogSocketAddr -> EventlogSocketOpts -> IO (),
    FilePath -> IO (),
    FilePath -> IO (),
    IO (),
    IO (),
    IO (Maybe (EventlogSocketAddr, EventlogSocketOpts)),
    EventlogSocketOpts,
    IO (),
    IO ()
  )
upstream =
  (startWith, start, startWait, wait, startFromEnv, fromEnv, defaultEventlogSocketOpts,
   testWorkerStatus, testControlStatus)

main :: IO ()
main = do
  args <- getArgs
  case args of
    ["stream", path, n] -> stream path (read n)
    ["live", path, go] -> live path go
    ["env"] -> env
    ["fromenv", go] -> fromenvStart go
    ["custom", path] -> custom path
    _ -> exitWith (ExitFailure 2)

stream :: FilePath -> Int -> IO ()
stream path n = do
  before <- stats
  putStrLn ("stats before start: " ++ maybe "none" (const "some") before)
  let opts = defaultEventlogSocketOpts {esoWait = True, esoSndbuf = Just 65536, esoLinger = Just 2}
  startWith (EventlogSocketUnixAddr {esaUnixPath = path}) opts
  wait
  testWorkerStatus
  testControlStatus
  forM_ [1 .. n] $ \i -> traceMarkerIO ("tiny " ++ show i)
  Just s <- stats
  putStrLn ("clients accepted: " ++ show (statsClientsAccepted s))

fromenvStart :: FilePath -> IO ()
fromenvStart go = do
  startFromEnv
  let poll :: Int -> IO Bool
      poll 0 = pure False
      poll k = do
        there <- doesFileExist go
        if there then pure True else threadDelay 50000 >> poll (k - 1)
  seen <- poll 1200
  putStrLn (if seen then "go" else "no go")

live :: FilePath -> FilePath -> IO ()
live path go = do
  startWith (EventlogSocketUnixAddr path) defaultEventlogSocketOpts {esoWait = True}
  traceMarkerIO "live 1"
  let poll :: Int -> IO Bool
      poll 0 = pure False
      poll k = do
        there <- doesFileExist go
        if there then pure True else threadDelay 50000 >> poll (k - 1)
  seen <- poll 1200
  putStrLn (if seen then "go" else "no go")

-- Upstream's signatures for commands and hooks.
upstreamControl ::
  ( String -> IO Namespace,
    Namespace -> CommandId -> CommandHandler -> IO (),
    Namespace -> IO String,
    Hook -> HookHandler -> IO ()
  )
upstreamControl = (registerNamespace, registerCommand, namespaceName, registerHook)

custom :: FilePath -> IO ()
custom path = do
  let (regNs, regCmd, nsName, regHook) = upstreamControl
  done <- newEmptyMVar
  ns <- regNs "tiny"
  name <- nsName ns
  putStrLn ("namespace " ++ name)
  regCmd ns (CommandId 1) (traceMarkerIO "tiny custom 1" >> putMVar done ())
  -- Throws a message of two lines, the first longer than one line of the
  -- library's log, in two-byte characters; then one whose message is an error.
  regCmd ns (CommandId 2) (throwIO (userError ("boom\n" ++ replicate 300 '\233' ++ replicate 300 'x' ++ "\nthe end")))
  regCmd ns (CommandId 3) (throwIO (userError (error "unshowable")))
  mapM_ (\i -> regCmd ns (CommandId i) (pure ())) [4 .. 255]
  putStrLn "255 commands registered"
  regHook HookPostStartEventLogging (traceMarkerIO "tiny hook")
  -- This package's 0.2 names still work.
  regHook EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING (traceMarkerIO "tiny pre-end")
  refused "namespace again" (regNs "tiny")
  refused "reserved namespace" (regNs "eventlog-socket")
  refused "command again" (regCmd ns (CommandId 1) (pure ()))
  startWith (EventlogSocketUnixAddr path) defaultEventlogSocketOpts {esoWait = True}
  let poll :: Int -> IO Bool
      poll 0 = pure False
      poll k = tryTakeMVar done >>= maybe (threadDelay 50000 >> poll (k - 1)) (const (pure True))
  ran <- poll 600
  putStrLn (if ran then "command 1 ran" else "command 1 never ran")
  where
    refused :: String -> IO a -> IO ()
    refused what act = do
      r <- try act
      putStrLn $ case r of
        Left e -> what ++ " refused: " ++ show (e :: EventlogSocketControlError)
        Right _ -> what ++ " accepted"

env :: IO ()
env = do
  r <- try fromEnv
  case r of
    Left e -> putStrLn ("error: " ++ show (e :: EventlogSocketAddrError))
    Right Nothing -> putStrLn "not configured"
    Right (Just (addr, opts)) ->
      putStrLn
        ( show addr ++ " wait=" ++ show (esoWait opts)
            ++ " max=" ++ show (esoMaxBuffer opts)
            ++ " slow=" ++ show (esoSlowClient opts)
            ++ " clients=" ++ show (esoMaxClients opts)
            ++ " others=" ++ show (esoAllowOtherUsers opts)
            ++ " control=" ++ show (esoControlIntervalMs opts)
        )
  let (_, _, _, _, _, _, d, _, _) = upstream
  putStrLn ("default wait: " ++ show (esoWait d))
