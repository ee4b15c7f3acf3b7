-- SPDX-License-Identifier: BSD-3-Clause
-- | fibber-hs-start: the Haskell-started variant of fibber-c-main. @main@
-- starts eventlog-socket from the environment (GHC_EVENTLOG_UNIX_PATH, or
-- GHC_EVENTLOG_INET_PORT, ...), then prints fib of each argument and posts
-- each result as an eventlog marker ("fib N = R").
module Main (main) where

import Control.Monad (forM_)
import Debug.Trace (traceMarkerIO)
import qualified GHC.Eventlog.Socket as Eventlog
import System.Environment (getArgs, getProgName)
import System.Exit (exitFailure)
import System.IO (hFlush, hPutStrLn, stderr, stdout)
import Text.Read (readMaybe)

-- Slow and allocating on purpose, so there is work and garbage collection
-- to see in the eventlog.
slowFib :: Int -> Integer
slowFib n
  | n < 2 = toInteger n
  | otherwise = slowFib (n - 1) + slowFib (n - 2)

main :: IO ()
main = do
  Eventlog.startFromEnv
  args <- getArgs
  ns <- case traverse readMaybe args of
    Just ns@(_ : _) -> pure ns
    _ -> do
      prog <- getProgName
      hPutStrLn stderr ("usage: " ++ prog ++ " N...")
      exitFailure
  forM_ ns $ \n -> do
    let r = slowFib n
    r `seq` traceMarkerIO ("fib " ++ show n ++ " = " ++ show r)
    putStrLn ("fib " ++ show n ++ " = " ++ show r)
    hFlush stdout
