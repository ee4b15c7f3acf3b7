-- SPDX-License-Identifier: BSD-3-Clause
-- | Started by cmain.c: post the markers "c 1".."c N" for N in the arguments.
module Main (main) where

import Control.Monad (forM_)
import Debug.Trace (traceMarkerIO)
import System.Environment (getArgs)

main :: IO ()
main = do
  [n] <- getArgs
  forM_ [1 .. read n :: Int] $ \i -> traceMarkerIO ("c " ++ show i)
