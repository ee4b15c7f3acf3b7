-- SPDX-License-Identifier: BSD-3-Clause
-- | fibber-c-main: computes Fibonacci numbers so there is an eventlog to
-- stream. @fibber-c-main N...@ prints fib of each N; with @--forever@ it
-- repeats the list until killed. Each result is also posted as an eventlog
-- marker ("fib N = R"), so a client can see the program's progress.
module Main (main) where

import Control.Monad (forM_, forever)
import Debug.Trace (traceMarkerIO)
import System.Environment (getArgs, getProgName)
import System.Exit (exitFailure)
import System.IO (hFlush, hPutStrLn, stderr, stdout)
import Text.Read (readMaybe)

fib :: Int -> Integer
fib n = go n 0 1
  where
    go 0 a _ = a
    go k a b = go (k - 1) b (a + b)

-- A deliberately slow, allocating variant, so the program does enough work
-- (and garbage collection) for a heap profile to show something.
slowFib :: Int -> Integer
slowFib n
  | n < 2 = toInteger n
  | otherwise = slowFib (n - 1) + slowFib (n - 2)

main :: IO ()
main = do
  args <- getArgs
  let forever' = "--forever" `elem` args
      numbers = [a | a <- args, a /= "--forever"]
  ns <- case traverse readMaybe numbers of
    Just ns@(_ : _) -> pure ns
    _ -> do
      prog <- getProgName
      hPutStrLn stderr ("usage: " ++ prog ++ " [--forever] N...")
      exitFailure
  let once = forM_ ns $ \n -> do
        let r = if n <= 30 then slowFib n else fib n
        r `seq` traceMarkerIO ("fib " ++ show n ++ " = " ++ show r)
        putStrLn ("fib " ++ show n ++ " = " ++ show r)
        hFlush stdout
  if forever' then forever once else once
