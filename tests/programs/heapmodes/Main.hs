-- SPDX-License-Identifier: BSD-3-Clause
-- The heap-modes test program (tests/integration/client/test_heapmodes.py):
-- a profiled program whose heap holds closures of several constructors,
-- types, modules and cost-centre stacks for a second or so, so that each
-- heap profile mode (-hc -hm -hd -hy -hi -hT) has several labels.
module Main (main) where

import Data.IORef
import Shapes

-- A list of trees grown and dropped step by step.
grow :: Int -> [Shape]
grow n = [mkShape k | k <- [1 .. n]]

keepTotal :: IORef Int -> [Shape] -> IO ()
keepTotal ref xs = modifyIORef' ref (+ sum (map area xs))

main :: IO ()
main = do
  ref <- newIORef 0
  let loop :: Int -> [[Shape]] -> IO ()
      loop 0 _ = return ()
      loop i kept = do
        let new = grow (2000 + i * 10)
        keepTotal ref new
        let kept' = take 8 (new : kept)
        mapM_ (keepTotal ref) kept'
        loop (i - 1) kept'
  loop 120 []
  readIORef ref >>= print
