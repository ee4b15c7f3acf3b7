-- SPDX-License-Identifier: BSD-3-Clause
-- | The commands every test program takes on stdin, one per line, each
-- answered on stdout once done, and the loop that reads them: the probe
-- (tests/programs/probe, started from a C main) and hsstart (tests/programs/hsstart, started
-- from Haskell) share them, so a test drives either the same way.
--
--   marker TEXT          post an eventlog marker (traceMarkerIO); "ok"
--   flood N TAG          post N user messages "TAG i", i = 1..N; "ok"
--   flood-for S TAG [K]  post user messages "TAG i" for S seconds, K
--                        (default 1000) every 10 ms; "ok N", the number
--   spans N MS LABEL     in N threads at once, a span LABEL of about MS ms
--                        (traceEventIO "START LABEL" ... "STOP LABEL")
--                        with LABEL.inner, half of it, inside; "ok" when
--                        all have ended
--   span-flood S RATE T LABEL  in T threads (forkIO), spans LABEL ("START
--                        LABEL", then at once "STOP LABEL"), about RATE a
--                        second in all, for S seconds; "ok N", the number
--   fail N               exit with status N (exitWith (ExitFailure N))
--   throw TEXT           end by an uncaught exception (error TEXT): status 1
--
-- A program adds its own (quit among them) in front of these.
module Commands (reply, replyWith, floodFor, commandLoop) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, takeMVar)
import Control.Monad (forM_)
import Debug.Trace (traceEventIO, traceMarkerIO)
import GHC.Clock (getMonotonicTime)
import System.Exit (ExitCode (ExitFailure), exitWith)
import System.IO (hFlush, hIsEOF, hPutStrLn, stderr, stdin, stdout)

-- | "ok": the command is done.
reply :: IO ()
reply = replyWith "ok"

-- | A line of answer, flushed at once (the test waits for it).
replyWith :: String -> IO ()
replyWith line = putStrLn line >> hFlush stdout

-- | Post numbered messages, `per` every 10 ms, until `seconds` have passed;
-- return the count. Pacing keeps the volume one test can parse in seconds.
floodFor :: Double -> Int -> String -> IO Int
floodFor seconds per tag = do
  start <- getMonotonicTime
  let go i = do
        forM_ [i .. i + per - 1] $ \j -> traceEventIO (tag ++ " " ++ show j)
        threadDelay 10000
        now <- getMonotonicTime
        if now - start < seconds then go (i + per) else pure (i + per - 1)
  go 1

-- | A thread that marks a span `label` of `ms` ms with `label.inner`, its
-- second half, nested in it; the MVar is filled when it has ended.
spanThread :: Int -> String -> IO (MVar ())
spanThread ms label = do
  done <- newEmptyMVar
  _ <- forkIO $ do
    traceEventIO ("START " ++ label)
    threadDelay (ms * 500)
    traceEventIO ("START " ++ label ++ ".inner")
    threadDelay (ms * 500)
    traceEventIO ("STOP " ++ label ++ ".inner")
    traceEventIO ("STOP " ++ label)
    putMVar done ()
  pure done

-- | Spans `label`, `rate` a second in all from `threads` threads, for
-- `seconds` seconds; the number posted. Each thread wakes every 10 ms and
-- posts the spans its share of the rate owes by then, so sleeping late
-- does not lower the rate.
spanFlood :: Double -> Double -> Int -> String -> IO Int
spanFlood seconds rate threads label = do
  start <- getMonotonicTime
  let perThread = rate / fromIntegral threads
      begin = "START " ++ label
      end = "STOP " ++ label
      go posted = do
        now <- getMonotonicTime
        let elapsed = min seconds (now - start)
            due = floor (elapsed * perThread) :: Int
        forM_ [posted + 1 .. due] $ \_ -> traceEventIO begin >> traceEventIO end
        if elapsed >= seconds
          then pure (max posted due)
          else threadDelay 10000 >> go (max posted due)
  dones <- mapM (const (fork (go 0))) [1 .. threads]
  sum <$> mapM takeMVar dones
  where
    fork act = do
      done <- newEmptyMVar
      _ <- forkIO (act >>= putMVar done)
      pure done

-- | The shared commands; Nothing for any other.
shared :: [String] -> Maybe (IO ())
shared ("marker" : rest) = Just (traceMarkerIO (unwords rest) >> reply)
shared ["flood", n, tag] =
  Just (forM_ [1 .. read n :: Int] (\i -> traceEventIO (tag ++ " " ++ show i)) >> reply)
shared ("flood-for" : secs : tag : per) = Just $ do
  n <- floodFor (read secs) (case per of [k] -> read k; _ -> 1000) tag
  replyWith ("ok " ++ show n)
shared ["spans", n, ms, label] = Just $ do
  dones <- mapM (const (spanThread (read ms) label)) [1 .. read n :: Int]
  mapM_ takeMVar dones
  reply
shared ["span-flood", secs, rate, threads, label] = Just $ do
  n <- spanFlood (read secs) (read rate) (read threads) label
  replyWith ("ok " ++ show n)
shared ["fail", n] = Just (exitWith (ExitFailure (read n)))
shared ("throw" : rest) = Just (error (unwords rest))
shared _ = Nothing

-- | Read commands until the end of stdin, or until one of the program's
-- own says to stop (its action returns False). A line's words go to `own`
-- first, then to the shared commands; one neither knows is said on stderr,
-- after `name`, and the loop goes on.
commandLoop :: String -> ([String] -> Maybe (IO Bool)) -> IO ()
commandLoop name own = go
  where
    go = do
      eof <- hIsEOF stdin
      if eof then pure () else getLine >>= run
    run line = case (own (words line), shared (words line)) of
      (Just act, _) -> act >>= \more -> if more then go else pure ()
      (Nothing, Just act) -> act >> go
      (Nothing, Nothing) -> hPutStrLn stderr (name ++ ": unknown command: " ++ line) >> go
