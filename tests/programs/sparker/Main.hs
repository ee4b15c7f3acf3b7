-- SPDX-License-Identifier: BSD-3-Clause
-- | sparker: a program that makes sparks (GHC.Conc's par/pseq), for the
-- spark views' tests. Run with +RTS -N2 -s: it creates a few thousand
-- sparks whose outcomes differ, and the RTS's own "SPARKS:" line says what
-- became of them.
--
--   sparker [ROUNDS]   ROUNDS rounds (default 20, 50 ms apart; 0: until
--                      stdin ends), each of four phases:
--
--   * a parallel Fibonacci with a spark per call above a threshold: most
--     are run by the other capability (converted), some are evaluated by
--     their parent first (fizzled);
--   * sparks of values already evaluated (dud);
--   * many cheap thunks sparked in a burst, more than the spark pool holds
--     (overflowed), never looked at again and collected (GC'd) unless the
--     other capability gets to them first;
--   * thunks sparked and then forced at once by the main thread (fizzled).
--
-- Each round ends with a major GC and a marker "round N", so the spark
-- counters are posted along the run, not only at exit, and a pause of 50 ms
-- (the run lasts about a second: long enough for live views).
module Main (main) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Exception (evaluate)
import Control.Monad (forM_, unless)
import Data.IORef (newIORef, readIORef, writeIORef)
import Debug.Trace (traceMarkerIO)
import GHC.Conc (par, pseq)
import System.Environment (getArgs)
import System.IO (hIsEOF, stdin)
import System.Mem (performMajorGC)
import Text.Read (readMaybe)
import Prelude hiding (round)

fib :: Int -> Int
fib n = if n < 2 then n else fib (n - 1) + fib (n - 2)

pfib :: Int -> Int
pfib n
  | n < 14 = fib n
  | otherwise = a `par` (b `pseq` (a + b))
  where
    a = pfib (n - 1)
    b = pfib (n - 2)

-- A thunk that costs a little, distinct per i (so nothing is shared).
cheap :: Int -> Int
cheap i = sum [i .. i + 200]
{-# NOINLINE cheap #-}

-- Spark every element in one burst, the list kept alive until the burst
-- is over (so the pool fills and overflows rather than being pruned by a
-- minor GC on the way), and return how many were sparked. A major GC
-- while they are alive posts counters with sparks in the pool; after that
-- nothing refers to them but their sparks.
sparkAll :: [Int] -> IO Int
sparkAll xs = do
  let ts = map cheap xs
  forM_ ts $ \t -> evaluate (t `par` ())
  performMajorGC -- with the thunks alive: the counters show a full pool
  evaluate (length ts)

-- Spark values already evaluated: duds.
sparkDuds :: [Int] -> IO ()
sparkDuds xs = forM_ xs $ \x -> do
  v <- evaluate x
  evaluate (v `par` ())

-- Spark a thunk and force it at once: the spark fizzles (unless stolen
-- first).
sparkForced :: [Int] -> IO Int
sparkForced xs = do
  rs <- mapM (\x -> let t = cheap x in evaluate (t `par` t)) xs
  evaluate (sum rs)

round :: Int -> IO ()
round r = do
  v <- evaluate (pfib (20 + r `mod` 2))
  sparkDuds [r * 1000 .. r * 1000 + 499]
  k <- sparkAll [r * 100000 .. r * 100000 + 7999]
  f <- sparkForced [r * 7000 .. r * 7000 + 499]
  performMajorGC
  traceMarkerIO ("round " ++ show r)
  putStrLn ("round " ++ show r ++ ": pfib " ++ show v ++ ", " ++ show k ++ " burst, " ++ show f)
  threadDelay 50000

main :: IO ()
main = do
  args <- getArgs
  let rounds = case args of
        [a] | Just n <- readMaybe a -> n
        _ -> 20 :: Int
  if rounds > 0
    then forM_ [1 .. rounds] round
    else do
      done <- newIORef False
      _ <- forkIO (hIsEOF stdin >> writeIORef done True)
      let loop r = do
            round r
            stop <- readIORef done
            unless stop (loop (r + 1))
      loop 1
