-- SPDX-License-Identifier: BSD-3-Clause
-- | hsstart: a program that starts eventlog-socket from Haskell, as most
-- users do: GHC's own main runs it (built without -no-hs-main, with
-- -with-rtsopts=-l), and its first lines call the module
-- GHC.Eventlog.Socket. The first argument says how:
--
--   env                         startFromEnv (GHC_EVENTLOG_* variables)
--   with PATH RETAIN SECS DUMP  startWith on the Unix socket PATH, with
--                               esoRetainBytes RETAIN, esoRetainSeconds
--                               SECS and esoDumpOnFailure DUMP ("-": none)
--
-- It answers "started" on stdout once the call has returned, then takes
-- commands on stdin as the probe does (tests/probe/Main.hs), each answered
-- with "ok":
--
--   marker TEXT       post an eventlog marker (traceMarkerIO)
--   flood N TAG       post N user messages "TAG i", i = 1..N (traceEventIO)
--   flood-for S TAG   post user messages "TAG i" for S seconds, 1000 every
--                     10 ms; answers "ok N" with the number posted
--   fail N            exit with status N (exitWith (ExitFailure N))
--   throw TEXT        end by an uncaught exception (error TEXT): status 1
--   quit              exit normally (exitSuccess)
--
-- At the end of its input, main returns.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (forM_)
import Debug.Trace (traceEventIO, traceMarkerIO)
import GHC.Clock (getMonotonicTime)
import qualified GHC.Eventlog.Socket as Eventlog
import System.Environment (getArgs)
import System.Exit (ExitCode (ExitFailure), exitSuccess, exitWith)
import System.IO (hFlush, hIsEOF, hPutStrLn, stderr, stdin, stdout)

start :: [String] -> IO ()
start ["env"] = Eventlog.startFromEnv
start ["with", path, retain, secs, dump] =
  Eventlog.startWith
    (Eventlog.EventlogSocketUnixAddr path)
    Eventlog.defaultEventlogSocketOpts
      { Eventlog.esoRetainBytes = read retain,
        Eventlog.esoRetainSeconds = read secs,
        Eventlog.esoDumpOnFailure = if dump == "-" then Nothing else Just dump
      }
start args = hPutStrLn stderr ("hsstart: bad arguments " ++ show args) >> exitWith (ExitFailure 64)

say :: String -> IO ()
say line = putStrLn line >> hFlush stdout

floodFor :: Double -> String -> IO Int
floodFor seconds tag = do
  begin <- getMonotonicTime
  let go i = do
        forM_ [i .. i + 999] $ \j -> traceEventIO (tag ++ " " ++ show j)
        threadDelay 10000
        now <- getMonotonicTime
        if now - begin < seconds then go (i + 1000) else pure (i + 999)
  go 1

loop :: IO ()
loop = do
  eof <- hIsEOF stdin
  if eof
    then pure ()
    else do
      line <- getLine
      case words line of
        ("marker" : rest) -> traceMarkerIO (unwords rest) >> say "ok" >> loop
        ["flood", n, tag] -> do
          forM_ [1 .. read n :: Int] $ \i -> traceEventIO (tag ++ " " ++ show i)
          say "ok" >> loop
        ["flood-for", secs, tag] -> floodFor (read secs) tag >>= \n -> say ("ok " ++ show n) >> loop
        ["fail", n] -> exitWith (ExitFailure (read n))
        ("throw" : rest) -> error (unwords rest)
        ["quit"] -> exitSuccess
        _ -> hPutStrLn stderr ("hsstart: unknown command: " ++ line) >> loop

main :: IO ()
main = do
  getArgs >>= start
  say "started"
  loop
