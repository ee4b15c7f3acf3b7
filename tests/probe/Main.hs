-- | probe: a Haskell program the integration tests drive through stdin, so
-- they decide exactly when events happen. One command per line; each is
-- answered with "ok" on stdout once done:
--
--   marker TEXT        post an eventlog marker (traceMarkerIO)
--   flood N TAG        post N user messages "TAG i", i = 1..N (traceEventIO)
--   gc                 perform a major GC
--   quit               exit normally (so does end of input)
--
-- With --busy a background thread allocates continuously, so the scheduler
-- keeps running and heap profile samples keep coming.
module Main (main) where

import Control.Concurrent (forkIO)
import Control.Exception (evaluate)
import Control.Monad (forM_, when)
import Debug.Trace (traceEventIO, traceMarkerIO)
import System.Environment (getArgs)
import System.IO (hFlush, hIsEOF, hPutStrLn, stderr, stdin, stdout)
import System.Mem (performMajorGC)

-- Each round depends on the last, so GHC cannot float the work out as a
-- constant, and Integer arithmetic allocates, so the thread yields to the
-- scheduler (a non-allocating loop would starve the main thread).
busy :: Integer -> IO ()
busy n = do
  k <- evaluate (length (show (product [1 .. 200 + n `mod` 50])))
  busy (n + 1 + toInteger (k `mod` 2))

reply :: IO ()
reply = putStrLn "ok" >> hFlush stdout

loop :: IO ()
loop = do
  eof <- hIsEOF stdin
  if eof
    then pure ()
    else do
      line <- getLine
      case words line of
        ("marker" : rest) -> traceMarkerIO (unwords rest) >> reply >> loop
        ["flood", n, tag] -> do
          forM_ [1 .. read n :: Int] $ \i -> traceEventIO (tag ++ " " ++ show i)
          reply >> loop
        ["gc"] -> performMajorGC >> reply >> loop
        ["quit"] -> reply
        _ -> hPutStrLn stderr ("probe: unknown command: " ++ line) >> loop

main :: IO ()
main = do
  args <- getArgs
  when ("--busy" `elem` args) $ () <$ forkIO (busy 0)
  loop
