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
-- the commands every test program takes (tests/programs/common/Commands.hs: marker,
-- flood, flood-for, fail, throw), and
--
--   withspan N MS LABEL F  in N threads at once, Eventlog.withSpan LABEL
--                     around a threadDelay of MS ms; every F-th thread's
--                     action then throws (caught outside the span; F 0:
--                     none); answers "ok" when all have ended
--   quit              exit normally (exitSuccess)
--
-- At the end of its input, main returns.
module Main (main) where

import Commands (commandLoop, replyWith)
import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (ErrorCall (..), throwIO, try)
import Control.Monad (forM, forM_, when)
import qualified GHC.Eventlog.Socket as Eventlog
import System.Environment (getArgs)
import System.Exit (ExitCode (ExitFailure), exitSuccess, exitWith)
import System.IO (hPutStrLn, stderr)

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

main :: IO ()
main = do
  getArgs >>= start
  replyWith "started"
  commandLoop "hsstart" own
  where
    own ["quit"] = Just exitSuccess
    own ["withspan", n, ms, label, f] = Just (withSpans (read n) (read ms) label (read f) >> pure True)
    own _ = Nothing

-- | N threads each in a span of about MS ms; every F-th one fails.
withSpans :: Int -> Int -> String -> Int -> IO ()
withSpans n ms label f = do
  dones <- forM [1 .. n] $ \i -> do
    done <- newEmptyMVar
    _ <- forkIO $ do
      r <- try $ Eventlog.withSpan label $ do
        threadDelay (ms * 1000)
        when (f > 0 && i `mod` f == 0) (throwIO (ErrorCall "failed on purpose"))
      putMVar done (either (\(ErrorCall _) -> ()) id r)
    pure done
  forM_ dones takeMVar
  replyWith "ok"
