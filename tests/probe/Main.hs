-- | probe: a Haskell program the integration tests drive through stdin, so
-- they decide exactly when events happen. One command per line; each is
-- answered with "ok" on stdout once done:
--
--   marker TEXT        post an eventlog marker (traceMarkerIO)
--   flood N TAG        post N user messages "TAG i", i = 1..N (traceEventIO)
--   gc                 perform a major GC
--   start-unix PATH    switch the running RTS to eventlog-socket on PATH
--                      (eventlog_socket_start_unix); answers "ok" or
--                      "error MESSAGE"
--   quit               exit normally (so does end of input)
--
-- With --busy a background thread allocates continuously, so the scheduler
-- keeps running and heap profile samples keep coming.
{-# LANGUAGE ForeignFunctionInterface #-}

module Main (main) where

import Control.Concurrent (forkIO)
import Control.Exception (evaluate)
import Control.Monad (forM_, when)
import Debug.Trace (traceEventIO, traceMarkerIO)
import Foreign.C.String (CString, peekCString, withCString)
import Foreign.C.Types (CBool (..), CInt (..))
import System.Environment (getArgs)
import System.IO (hFlush, hIsEOF, hPutStrLn, stderr, stdin, stdout)
import System.Mem (performMajorGC)

-- Each round depends on the last, so GHC cannot float the work out as a
-- constant, and Integer arithmetic allocates, so the thread yields to the
-- scheduler (a non-allocating loop would starve the main thread).
-- A safe call: the RTS is switched from a thread that holds no capability.
foreign import ccall safe "eventlog_socket_start_unix"
  c_start_unix :: CString -> CBool -> IO CInt

foreign import ccall unsafe "eventlog_socket_strerror"
  c_strerror :: CInt -> IO CString

startUnix :: String -> IO ()
startUnix path = do
  r <- withCString path $ \p -> c_start_unix p 0
  if r == 0
    then reply
    else do
      err <- c_strerror r >>= peekCString
      putStrLn ("error " ++ err) >> hFlush stdout

busy :: Integer -> IO ()
busy n = do
  k <- evaluate (length (show (product [1 .. 200 + n `mod` 50])))
  busy (n + 1 + toInteger (k `mod` 2))

reply :: IO ()
reply = putStrLn "ok" >> hFlush stdout

loop :: IO ()
loop = do
  eof <- hIsEOF stdin
  if eof
    then pure ()
    else do
      line <- getLine
      case words line of
        ("marker" : rest) -> traceMarkerIO (unwords rest) >> reply >> loop
        ["flood", n, tag] -> do
          forM_ [1 .. read n :: Int] $ \i -> traceEventIO (tag ++ " " ++ show i)
          reply >> loop
        ["gc"] -> performMajorGC >> reply >> loop
        ["start-unix", path] -> startUnix path >> loop
        ["quit"] -> reply
        _ -> hPutStrLn stderr ("probe: unknown command: " ++ line) >> loop

main :: IO ()
main = do
  args <- getArgs
  when ("--busy" `elem` args) $ () <$ forkIO (busy 0)
  loop
