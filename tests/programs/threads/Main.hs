-- SPDX-License-Identifier: BSD-3-Clause
-- | threads: a Haskell program whose threads do known things, for the
-- threads views of eventlog-socket's command (tests/integration/
-- client/test_threads.py). Base only. It labels itself "main" and forks
-- four labelled threads:
--
--   light    one unit of work, then finishes
--   medium   three units, then waits in STM (retry): blocked on STM
--   heavy    nine units, then waits on an MVar: blocked on MVar
--   waiter   waits on an MVar at once: blocked on MVar, hardly ran
--
-- Once light, medium and heavy have done their work it prints "ready" and
-- then follows commands on stdin, one a line, each answered "ok":
--
--   spawn N   fork N unlabelled threads that do a little work and finish,
--             and wait for them
--   hold N    fork N unlabelled threads that wait on waiter's MVar (read)
--             until the exit: the live count goes up by N and stays
--   quit      exit (so does end of input), after waking the blocked threads
--
-- Argument: the number of work rounds in a unit (default 1000, about 0.15 s
-- of one core).
module Main (main) where

import Control.Concurrent (ThreadId, forkIO, myThreadId)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, readMVar, takeMVar, tryPutMVar)
import Control.Exception (evaluate)
import Control.Monad (forM_, replicateM_)
import GHC.Conc (atomically, labelThread, newTVarIO, readTVar, retry, writeTVar)
import System.Environment (getArgs)
import System.IO (hFlush, hIsEOF, stdin, stdout)

-- | One round: a factorial as a big Integer, so the work allocates and the
-- thread can be descheduled like any Haskell thread.
work :: Int -> IO ()
work rounds = forM_ [1 .. rounds] $ \i -> do
  _ <- evaluate (length (show (product [1 .. fromIntegral (1000 + i `mod` 7) :: Integer])))
  pure ()

labelled :: String -> IO () -> IO ThreadId
labelled name act = do
  t <- forkIO act
  labelThread t name
  pure t

say :: String -> IO ()
say s = putStrLn s >> hFlush stdout

main :: IO ()
main = do
  args <- getArgs
  let unit = case args of
        (n : _) -> read n
        _ -> 1000
  me <- myThreadId
  labelThread me "main"
  done <- newEmptyMVar :: IO (MVar ())
  hold <- newEmptyMVar :: IO (MVar ())
  gate <- newEmptyMVar :: IO (MVar ())
  flag <- newTVarIO False
  _ <- labelled "waiter" (takeMVar gate)
  _ <- labelled "light" (work unit >> putMVar done ())
  _ <- labelled "medium" $ do
    work (3 * unit)
    putMVar done ()
    atomically (readTVar flag >>= \v -> if v then pure () else retry)
  _ <- labelled "heavy" (work (9 * unit) >> putMVar done () >> takeMVar hold)
  replicateM_ 3 (takeMVar done)
  say "ready"
  let loop = do
        eof <- hIsEOF stdin
        if eof
          then pure ()
          else do
            cmd <- words <$> getLine
            case cmd of
              ["spawn", n] -> do
                fin <- newEmptyMVar :: IO (MVar ())
                forM_ [1 .. read n :: Int] (\i -> forkIO (evaluate (length (show i)) >> putMVar fin ()))
                replicateM_ (read n) (takeMVar fin)
                say "ok" >> loop
              ["hold", n] -> do
                forM_ [1 .. read n :: Int] (\_ -> forkIO (readMVar gate))
                say "ok" >> loop
              ["quit"] -> say "ok"
              _ -> say ("unknown command: " ++ unwords cmd) >> loop
  loop
  -- The blocked threads' MVars and TVar stay reachable until here: a thread
  -- blocked on an unreachable one gets BlockedIndefinitely at the next major
  -- GC and finishes.
  _ <- tryPutMVar gate ()
  _ <- tryPutMVar hold ()
  atomically (writeTVar flag True)
