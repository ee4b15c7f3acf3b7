-- SPDX-License-Identifier: BSD-3-Clause
{-# LANGUAGE ForeignFunctionInterface #-}

-- | The Haskell side of upstream-c-main and ours-c-main. Their C hooks call
-- hs_post_start (POST_START: posts the marker "post-start N" for its Nth
-- run) and hs_pre_end (PRE_END: posts "pre-end", and says "pre-end hook
-- ran" on stderr). main posts "main
-- begins", says so on stdout, waits (60 s at most) until POST_START has
-- run twice (the second client's connection), posts "main ends" and
-- returns. With the argument "once" it does not wait. Uses upstream 0.1.3's Haskell API only (testWorkerStatus,
-- testControlStatus).
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Concurrent.MVar (MVar, modifyMVar_, newMVar, readMVar)
import Debug.Trace (traceMarkerIO)
import GHC.Eventlog.Socket (testControlStatus, testWorkerStatus)
import System.Environment (getArgs)
import System.Exit (exitFailure)
import System.IO (hFlush, hPutStrLn, stderr, stdout)
import System.IO.Unsafe (unsafePerformIO)

runs :: MVar Int
runs = unsafePerformIO (newMVar 0)
{-# NOINLINE runs #-}

hsPostStart :: IO ()
-- The marker is posted before the count goes up (inside modifyMVar_), so
-- that main, which waits for the count, posts "main ends" after it.
hsPostStart = modifyMVar_ runs $ \k -> do
  traceMarkerIO ("post-start " ++ show (k + 1))
  pure (k + 1)

hsPreEnd :: IO ()
hsPreEnd = traceMarkerIO "pre-end" >> hPutStrLn stderr "pre-end hook ran"

foreign export ccall "hs_post_start" hsPostStart :: IO ()

foreign export ccall "hs_pre_end" hsPreEnd :: IO ()

main :: IO ()
main = do
  traceMarkerIO "main begins"
  putStrLn "main begins"
  hFlush stdout
  let await :: Int -> IO Bool
      await 0 = pure False
      await k = do
        n <- readMVar runs
        if n >= 2 then pure True else threadDelay 10000 >> await (k - 1)
  args <- getArgs
  seen <- if args == ["once"] then pure True else await 6000
  testWorkerStatus
  testControlStatus
  traceMarkerIO "main ends"
  if seen then putStrLn "main ends" else putStrLn "no second POST_START" >> exitFailure
