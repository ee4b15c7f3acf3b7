-- SPDX-License-Identifier: BSD-3-Clause
-- The closures the heap-modes test program keeps alive (a second module,
-- for -hm).
module Shapes (Shape (..), mkShape, area) where

data Shape = Circle !Int | Rect Int Int | Tri [Int]

mkShape :: Int -> Shape
mkShape k = case k `mod` 3 of
  0 -> Circle k
  1 -> Rect k (k + 1)
  _ -> Tri [k, k + 1, k + 2]

area :: Shape -> Int
area (Circle r) = 3 * r * r
area (Rect a b) = a * b
area (Tri xs) = sum xs
