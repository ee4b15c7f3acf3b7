-- SPDX-License-Identifier: BSD-3-Clause
-- A program whose time goes to known places, for `eventlog-socket profile`'s
-- tests: about three quarters in `heavy`, a quarter in `light`. Built with
-- -prof -fprof-auto-top and run with +RTS -p -l, the RTS writes its own .prof
-- beside the eventlog, which the tests judge the profile against. Argument:
-- the rounds (20).
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

heavy :: Int -> Int
heavy n = foldl' (\a x -> (a * 31 + x) `mod` 1000003) 7 [1 .. n]

light :: Int -> Int
light n = foldl' (\a x -> (a * 17 + x) `mod` 999983) 3 [1 .. n]

main :: IO ()
main = do
  args <- getArgs
  let rounds = case args of
        (r : _) -> read r
        _ -> 20
  mapM_
    ( \i -> do
        let a = heavy (3000000 + i)
            b = light (1000000 + i)
        print (a + b)
    )
    [1 .. rounds :: Int]
