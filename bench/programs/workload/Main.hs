-- SPDX-License-Identifier: BSD-3-Clause
-- | The benchmark workload: an event-heavy Haskell program.
--
--   workload gc THREADS ROUNDS   THREADS threads each build and drop ROUNDS
--                                maps: many allocations, many GCs, full -l
--   workload trace THREADS N     THREADS threads post N traceEvent messages each
--   workload threads THREADS K   THREADS threads at once, each yielding K
--                                times and posting one marker: scheduler
--                                events by the thousand, little else
--   workload trace-for SECONDS   one thread posts traceEvent messages for
--                                SECONDS (paced: 1000 per millisecond)
--   workload big-for SECONDS MB_PER_S SIZE
--                                after a 1 s pause (for every client started
--                                with the program to connect), one thread
--                                posts SIZE-byte user messages for
--                                SECONDS, paced to MB_PER_S (10^6 bytes
--                                of message text a second; the stream adds
--                                14 bytes an event); the text is encoded
--                                once, so the program can write several
--                                hundred MB/s, where traceEventIO's
--                                encoding of a String holds it to tens
{-# LANGUAGE MagicHash, UnboxedTuples #-}
module Main (main) where

import Control.Concurrent (forkIO, threadDelay, yield)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (evaluate)
import Control.Monad (forM, forM_)
import qualified Data.Map.Strict as Map
import Debug.Trace (traceEventIO)
import Foreign.C.String (newCString)
import GHC.Clock (getMonotonicTime)
import GHC.Exts (traceEvent#)
import GHC.IO (IO (..))
import GHC.Ptr (Ptr (..))
import System.Environment (getArgs)

inThreads :: Int -> (Int -> IO ()) -> IO ()
inThreads n body = do
  done <- forM [1 .. n] $ \t -> do
    v <- newEmptyMVar
    _ <- forkIO (body t >> putMVar v ())
    pure v
  mapM_ takeMVar done

gcWork :: Int -> Int -> IO ()
gcWork threads rounds = inThreads threads $ \t ->
  -- Each round's map depends on the round, so GHC cannot build it once.
  forM_ [1 .. rounds] $ \r -> do
    let m = Map.fromList [(i, show (i * t + r)) | i <- [1 .. 20000 :: Int]]
    _ <- evaluate (Map.foldl' (\a s -> a + length s) 0 m)
    pure ()

traceWork :: Int -> Int -> IO ()
traceWork threads n = inThreads threads $ \t ->
  forM_ [1 .. n] $ \i -> traceEventIO ("bench " ++ show t ++ " " ++ show i)

threadsWork :: Int -> Int -> IO ()
threadsWork threads k = inThreads threads $ \t -> do
  forM_ [1 .. k] (const yield)
  traceEventIO ("done " ++ show t)

traceFor :: Double -> IO ()
traceFor seconds = do
  start <- getMonotonicTime
  let go i = do
        forM_ [i .. i + 999] $ \j -> traceEventIO ("bench " ++ show j)
        threadDelay 1000
        now <- getMonotonicTime
        if now - start < seconds then go (i + 1000) else pure ()
  go (1 :: Int)

bigFor :: Double -> Double -> Int -> IO ()
bigFor seconds mbPerS size = do
  Ptr text <- newCString (take size (cycle "bench big message "))
  threadDelay 1000000
  let post = IO (\s -> (# traceEvent# text s, () #))
      perMs = mbPerS * 1000 / fromIntegral size -- messages a millisecond
  start <- getMonotonicTime
  let go sent = do
        now <- getMonotonicTime
        let due = floor ((now - start) * 1000 * perMs) :: Int
        forM_ [sent + 1 .. due] $ \_ -> post
        if now - start < seconds then threadDelay 1000 >> go (max sent due) else pure ()
  go 0

main :: IO ()
main = do
  args <- getArgs
  case args of
    ["gc", threads, rounds] -> gcWork (read threads) (read rounds)
    ["trace", threads, n] -> traceWork (read threads) (read n)
    ["threads", threads, k] -> threadsWork (read threads) (read k)
    ["trace-for", secs] -> traceFor (read secs)
    ["big-for", secs, rate, size] -> bigFor (read secs) (read rate) (read size)
    _ -> error ("usage: workload gc THREADS ROUNDS | trace THREADS N | threads THREADS K"
                ++ " | trace-for SECONDS"
                ++ " | big-for SECONDS MB_PER_S SIZE")
