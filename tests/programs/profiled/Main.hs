-- SPDX-License-Identifier: BSD-3-Clause
-- A program whose time goes to known places, for `eventlog-socket profile`'s
-- tests: about three quarters in `heavy`, a quarter in `light`. Built with
-- -prof -fprof-auto-top and run with +RTS -p -l, the RTS writes its own .prof
-- beside the eventlog, which the tests judge the profile against. Arguments:
-- the rounds (20), then the work of `heavy` and of `light` per round
-- (3000000 and 1000000; swapped, the time goes the other way).
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
  let (rounds, nh, nl) = case args of
        [r, h, l] -> (read r, read h, read l)
        (r : _) -> (read r, 3000000, 1000000)
        _ -> (20, 3000000, 1000000)
  mapM_
    ( \i -> do
        let a = heavy (nh + i)
            b = light (nl + i)
        print (a + b)
    )
    [1 .. rounds :: Int]
