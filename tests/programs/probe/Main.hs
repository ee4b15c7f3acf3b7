-- SPDX-License-Identifier: BSD-3-Clause
-- | probe: a Haskell program the integration tests drive through stdin, so
-- they decide exactly when events happen. One command per line; each is
-- answered with "ok" on stdout once done. Besides the commands every test
-- program takes (tests/programs/common/Commands.hs: marker, flood, flood-for, whose
-- 1000 every 10 ms are about 3 MB/s of eventlog, fail, throw):
--
--   flood-fast S TAG   post user messages "TAG i" without pause for S seconds
--                      (a full 2 MiB buffer every 80 ms or so); "ok N"
--   hwm                answer "hwm KB": the process's peak RSS (VmHWM)
--   gcstats            answer "gcstats GCS MAJOR GC_CPU_NS GC_ELAPSED_NS
--                      MUTATOR_CPU_NS MUTATOR_ELAPSED_NS": the RTS's own
--                      account (GHC.Stats; needs +RTS -T, else "gcstats off")
--   stats              answer "stats" and eventlog_socket_stats' counters
--                      in declaration order
--   gc                 perform a major GC
--   sleep S            wait S seconds in threadDelay (the program is idle)
--   open-files N       open /dev/null N times at once, then close them all;
--                      answers "ok K" with the number that could be opened
--   start-unix PATH    switch the running RTS to eventlog-socket on PATH
--                      (eventlog_socket_start_unix); answers "ok" or
--                      "error MESSAGE"
--   start-unix-wait PATH  the same, waiting for the first client
--   work S MB          keep MB megabytes of live data and compute for S
--                      seconds (allocating); answers "ok N" with the number
--                      of rounds done, the program's speed
--   otel-spans N MS LABEL F  N threads each a span LABEL of about MS ms
--                      as opentelemetry-haskell posts them (binary user
--                      messages "OT" 3 TYPE with a serial); every F-th
--                      with its "error" tag "true" (F 0: none); the even
--                      ones ended from another thread, by serial
--   classes            answer "classes R ON CAN": eventlog_socket_event_classes'
--                      result, the classes on and those switchable (bits)
--   classes-switch ON OFF  eventlog_socket_switch_event_classes(ON, OFF)
--                      (decimal bits); "ok R" with its result
--   churn N            N threads at once, each yielding ten times and
--                      ending (scheduler events); "ok" when all have ended
--   sleepers N MS      fork N threads that sleep MS ms and end; "ok" at once
--   c-spans N MS LABEL F  N OS threads (forkOS) each a span of C code
--                      LABEL of MS ms (eventlog_socket_span_begin/_end),
--                      its second half a span LABEL.inner; every F-th
--                      ended failed (F 0: none); "ok" when all have ended
--   c-span-flood N     N spans of C code "flood" one after the other from
--                      this thread; "ok NS" with the wall time per span
--                      (its begin and end) in nanoseconds
--   c-span-check LABEL  answer "ok R" with eventlog_socket_span_begin's
--                      result for LABEL ("-" for the empty label, "\\n"
--                      in it a line break; a begun span is ended)
--   quit               exit normally (so does end of input)
--
-- With --custom, custom commands and hooks are registered through the C API
-- (namespace "probe": 1 posts the marker "custom probe 1", 2 sleeps 2 s and
-- then posts "custom probe 2 done"; namespace "other": 1 posts "custom other
-- 1"; namespace "my-package": 1 is the docs' example, a major GC and the
-- marker "gc done"; hooks post "hook post-start" and "hook pre-end").
-- With --sigterm-handler, SIGTERM makes the main thread exit with status 143
-- through hs_exit (docs/performance.md, "Stopping a program"); without it,
-- SIGTERM kills.
-- With --busy a background thread allocates continuously, so the scheduler
-- keeps running and heap profile samples keep coming.
-- With --heavy-light a background thread computes without end, about three
-- quarters of its time in `heavy` and a quarter in `light`, each a cost
-- centre of its own (Main.heavy, Main.light: SCC pragmas, so that the probe
-- built with -prof, BUILD/probe-prof, has user cost centres without
-- -fprof-auto), as tests/programs/profiled does in a run that ends.
{-# LANGUAGE ForeignFunctionInterface #-}
{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}

module Main (main) where

import Commands (commandLoop, reply, replyWith)
import Control.Concurrent (forkIO, forkOS, myThreadId, threadDelay, throwTo, yield)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (IOException, evaluate, try)
import Control.Monad (forM, forM_, when)
import Data.Bits (shiftR)
import Data.List (foldl')
import Debug.Trace (traceEventIO, traceMarkerIO)
import Foreign.C.String (CString, peekCString, withCString)
import Data.Word (Word64, Word8)
import Foreign.C.Types (CBool (..), CInt (..), CUInt (..))
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.C.Types (CSize (..))
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (withArrayLen)
import Foreign.Ptr (FunPtr, Ptr, nullPtr)
import GHC.Exts (Int (..), Ptr (..), traceBinaryEvent#)
import GHC.IO (IO (..))
import Foreign.Storable (peek)
import Foreign.Storable (peekByteOff)
import GHC.Clock (getMonotonicTime)
import GHC.Stats (RTSStats (..), getRTSStats, getRTSStatsEnabled)
import System.Environment (getArgs)
import System.IO (Handle, IOMode (ReadMode), hClose, hFlush, openFile, stdout)
import System.Exit (ExitCode (ExitFailure))
import System.Mem (performMajorGC)
import System.Posix.Signals (Handler (Catch), installHandler, sigTERM)

-- Each round depends on the last, so GHC cannot float the work out as a
-- constant, and Integer arithmetic allocates, so the thread yields to the
-- scheduler (a non-allocating loop would starve the main thread).
-- A safe call: the RTS is switched from a thread that holds no capability.
foreign import ccall safe "eventlog_socket_start_unix"
  c_start_unix :: CString -> CBool -> IO CInt

foreign import ccall unsafe "eventlog_socket_error_message"
  c_strerror :: CInt -> IO CString

startUnix :: CBool -> String -> IO ()
startUnix waitFlag path = do
  r <- withCString path $ \p -> c_start_unix p waitFlag
  if r == 0
    then reply
    else do
      err <- c_strerror r >>= peekCString
      putStrLn ("error " ++ err) >> hFlush stdout

foreign import ccall unsafe "eventlog_socket_stats"
  c_stats :: Ptr () -> IO CInt

foreign import ccall unsafe "eventlog_socket_event_classes"
  c_event_classes :: Ptr CUInt -> Ptr CUInt -> IO CInt

foreign import ccall safe "eventlog_socket_switch_event_classes"
  c_switch_classes :: CUInt -> CUInt -> IO CInt

foreign import ccall safe "eventlog_socket_span_begin"
  c_span_begin :: CString -> IO CInt

foreign import ccall safe "eventlog_socket_span_end"
  c_span_end :: CString -> CBool -> IO CInt

-- | A span of C code from the calling OS thread: its result, or the first
-- call's that failed.
cSpan :: String -> Bool -> IO a -> IO CInt
cSpan label failed act = withCString label $ \p -> do
  r <- c_span_begin p
  _ <- act
  e <- c_span_end p (if failed then 1 else 0)
  pure (if r /= 0 then r else e)

-- | N bound threads (each its own OS thread), each a span of C code of
-- ms milliseconds with an inner one in its second half.
cSpans :: Int -> Int -> String -> Int -> IO ()
cSpans n ms label f = do
  dones <- forM [1 .. n] $ \i -> do
    done <- newEmptyMVar
    _ <- forkOS $ do
      let failed = f > 0 && i `mod` f == 0
      r <- cSpan label failed $ do
        threadDelay (ms * 500)
        cSpan (label ++ ".inner") False (threadDelay (ms * 500))
      putMVar done r
    pure done
  rs <- mapM takeMVar dones
  when (any (/= 0) rs) $ replyWith ("error " ++ show rs)

-- | n spans of C code back to back; the wall time of one, in nanoseconds.
cSpanFlood :: Int -> IO Int
cSpanFlood n = withCString "flood" $ \p -> do
  t0 <- getMonotonicTime
  forM_ [1 .. n] $ \_ -> c_span_begin p >> c_span_end p 0
  t1 <- getMonotonicTime
  pure (round ((t1 - t0) * 1e9 / fromIntegral (max 1 n)))

-- | eventlog_socket_span_begin's result for a label; a begun span ends.
cSpanCheck :: String -> IO CInt
cSpanCheck word = withCString (unescape word) $ \p -> do
  r <- c_span_begin p
  when (r == 0) (() <$ c_span_end p 0)
  pure r
  where
    unescape "-" = ""
    unescape ('\\' : 'n' : rest) = '\n' : unescape rest
    unescape (c : rest) = c : unescape rest
    unescape [] = []

-- | "classes R ON CAN": eventlog_socket_event_classes' result and masks.
classes :: IO String
classes = alloca $ \on -> alloca $ \can -> do
  r <- c_event_classes on can
  a <- peek on
  b <- peek can
  pure (unwords ["classes", show r, show a, show b])

-- | N threads at once, each of which yields ten times and ends: scheduler
-- events (create, run, stop) by the hundred.
churn :: Int -> IO ()
churn n = do
  dones <- forM [1 .. n] $ \_ -> do
    done <- newEmptyMVar
    _ <- forkIO (forM_ [1 .. 10 :: Int] (const yield) >> putMVar done ())
    pure done
  mapM_ takeMVar dones

-- | The twenty-three uint64_t counters of struct eventlog_socket_stats.
stats :: IO [Word64]
stats = allocaBytes (23 * 8) $ \p -> do
  _ <- c_stats p
  mapM (peekByteOff p . (* 8)) [0 .. 22]

-- | The RTS's account of its collections and of the mutator, for the
-- benchmarks (bench/bench_trust.py): where a program's time went.
gcStats :: IO String
gcStats = do
  on <- getRTSStatsEnabled
  if not on
    then pure "off"
    else do
      s <- getRTSStats
      pure $
        unwords
          [ show (gcs s),
            show (major_gcs s),
            show (gc_cpu_ns s),
            show (gc_elapsed_ns s),
            show (mutator_cpu_ns s),
            show (mutator_elapsed_ns s)
          ]

peakRssKb :: IO String
peakRssKb = do
  status <- readFile "/proc/self/status"
  pure $ case [w | l <- lines status, (k : w : _) <- [words l], k == "VmHWM:"] of
    (kb : _) -> kb
    [] -> "0"

-- | Post numbered messages as fast as the program can for `seconds`,
-- looking at the clock every 1000; return the count.
floodFast :: Double -> String -> IO Int
floodFast seconds tag = do
  start <- getMonotonicTime
  let go i = do
        forM_ [i .. i + 999] $ \j -> traceEventIO (tag ++ " " ++ show j)
        now <- getMonotonicTime
        if now - start < seconds then go (i + 1000) else pure (i + 999)
  go 1

-- | Rounds of allocating arithmetic for `seconds`, while `mb` megabytes of
-- live data (a list of boxed Ints, 40 bytes each) stay reachable, so that
-- a major GC has that much to copy.
work :: Double -> Int -> IO Int
work seconds mb = do
  live <- evaluate (force [1 .. mb * 26000 :: Int])
  start <- getMonotonicTime
  let go :: Int -> IO Int
      go n = do
        k <- evaluate (length (show (product [1 .. 150 + toInteger (n `mod` 50)])))
        if n `mod` 64 /= 0
          then go (n + 1 + k `mod` 1)
          else do
            now <- getMonotonicTime
            if now - start < seconds then go (n + 1) else pure n
  n <- go 1
  _ <- evaluate (sum live)
  pure n
  where
    force xs = sum xs `seq` xs

heavy :: Int -> Int
heavy n = {-# SCC "heavy" #-} foldl' (\a x -> (a * 31 + x) `mod` 1000003) 7 [1 .. n]

light :: Int -> Int
light n = {-# SCC "light" #-} foldl' (\a x -> (a * 17 + x) `mod` 999983) 3 [1 .. n]

-- | Rounds of 300000 steps of heavy and 100000 of light (a few ms), the
-- work depending on the round so that none is shared between rounds.
heavyLight :: Int -> IO ()
heavyLight i = do
  _ <- evaluate (heavy (300000 + i `mod` 7))
  _ <- evaluate (light (100000 + i `mod` 7))
  heavyLight (i + 1)

busy :: Integer -> IO ()
busy n = do
  k <- evaluate (length (show (product [1 .. 200 + n `mod` 50])))
  busy (n + 1 + toInteger (k `mod` 2))

-- | The probe's own commands (the shared ones are Commands'); False: stop.
own :: [String] -> Maybe (IO Bool)
own cmd = case cmd of
  ["flood-fast", secs, tag] -> Just (floodFast (read secs) tag >>= \n -> answer ("ok " ++ show n))
  ["hwm"] -> Just (peakRssKb >>= \kb -> answer ("hwm " ++ kb))
  ["gcstats"] -> Just (gcStats >>= \s -> answer ("gcstats " ++ s))
  ["stats"] -> Just (stats >>= \counters -> answer (unwords ("stats" : map show counters)))
  ["gc"] -> Just (performMajorGC >> ok)
  ["sleep", secs] -> Just (threadDelay (round (read secs * 1e6 :: Double)) >> ok)
  ["open-files", n] -> Just (openFiles (read n) >>= \k -> answer ("ok " ++ show k))
  ["start-unix", path] -> Just (startUnix 0 path >> pure True)
  ["start-unix-wait", path] -> Just (startUnix 1 path >> pure True)
  ["work", secs, mb] -> Just (work (read secs) (read mb) >>= \n -> answer ("ok " ++ show n))
  ["otel-spans", n, ms, label, f] -> Just (otelSpans (read n) (read ms) label (read f) >> ok)
  ["classes"] -> Just (classes >>= answer)
  ["classes-switch", on, off] ->
    Just (c_switch_classes (read on) (read off) >>= \r -> answer ("ok " ++ show r))
  ["churn", n] -> Just (churn (read n) >> ok)
  ["c-spans", n, ms, label, f] -> Just (cSpans (read n) (read ms) label (read f) >> ok)
  ["c-span-flood", n] -> Just (cSpanFlood (read n) >>= \ns -> answer ("ok " ++ show ns))
  ["c-span-check", word] -> Just (cSpanCheck word >>= \r -> answer ("ok " ++ show r))
  ["sleepers", n, ms] ->
    Just (forM_ [1 .. read n :: Int] (const (forkIO (threadDelay (read ms * 1000)))) >> ok)
  ["quit"] -> Just (reply >> pure False)
  _ -> Nothing
  where
    ok = reply >> pure True
    answer line = replyWith line >> pure True

-- | Post a binary user message (traceBinaryEvent#, GHC 8.8+).
traceBinary :: [Word8] -> IO ()
traceBinary bytes = withArrayLen bytes $ \n (Ptr a) -> case n of
  I# n# -> IO (\s -> (# traceBinaryEvent# a n# s, () #))

-- | opentelemetry-haskell's binary span messages: "OT" 3 TYPE, the serial
-- (64 bits, little-endian), then the rest.
otelMsg :: Word8 -> Word64 -> [Word8] -> IO ()
otelMsg ty serial rest = traceBinary ([79, 84, 3, ty] ++ le 8 serial ++ rest)
  where
    le k v = [fromIntegral (v `shiftR` (8 * i)) | i <- [0 .. k - 1]]

otelSpans :: Int -> Int -> String -> Int -> IO ()
otelSpans n ms label f = do
  dones <- forM [1 .. n] $ \i -> do
    done <- newEmptyMVar
    let serial = fromIntegral (1000 + i) :: Word64
    _ <- forkIO $ do
      otelMsg 1 serial (map (fromIntegral . fromEnum) label)
      threadDelay (ms * 1000)
      when (f > 0 && i `mod` f == 0) $
        otelMsg 3 serial ([5, 0, 0, 0, 4, 0, 0, 0] ++ map (fromIntegral . fromEnum) "errortrue")
      if even i
        then () <$ forkIO (otelMsg 2 serial [] >> putMVar done ())
        else otelMsg 2 serial [] >> putMVar done ()
    pure done
  mapM_ takeMVar dones

-- | Open /dev/null up to n times at once (stopping at the first failure),
-- close them all, and return how many were open.
openFiles :: Int -> IO Int
openFiles n = go n []
  where
    go 0 hs = done hs
    go k hs = do
      r <- try (openFile "/dev/null" ReadMode) :: IO (Either IOException Handle)
      case r of
        Right h -> go (k - 1) (h : hs)
        Left _ -> done hs
    done hs = mapM_ hClose hs >> pure (length hs)

type CommandFn = Ptr () -> Word8 -> Ptr () -> IO ()

type HookFn = Ptr () -> IO ()

foreign import ccall safe "eventlog_socket_register_namespace"
  c_register_namespace :: CString -> CSize -> Ptr (Ptr ()) -> IO CInt

foreign import ccall safe "eventlog_socket_register_command"
  c_register_command :: Ptr () -> Word8 -> FunPtr CommandFn -> Ptr () -> IO CInt

-- The hook is a C enum (EventlogSocketHook): an unsigned int.
foreign import ccall safe "eventlog_socket_add_hook"
  c_add_hook :: CUInt -> FunPtr HookFn -> Ptr () -> IO CInt

foreign import ccall "wrapper" mkCommand :: CommandFn -> IO (FunPtr CommandFn)

foreign import ccall "wrapper" mkHook :: HookFn -> IO (FunPtr HookFn)

registerCustom :: IO ()
registerCustom = do
  probeNs <- namespace "probe"
  otherNs <- namespace "other"
  command probeNs 1 (traceMarkerIO "custom probe 1")
  command probeNs 2 (threadDelay 2000000 >> traceMarkerIO "custom probe 2 done")
  command otherNs 1 (traceMarkerIO "custom other 1")
  -- The example of docs/haskell.md, as a program would register it.
  myNs <- namespace "my-package"
  command myNs 1 (performMajorGC >> traceMarkerIO "gc done")
  hook 0 (traceMarkerIO "hook post-start")
  hook 1 (traceMarkerIO "hook pre-end")
  where
    namespace name = withCString name $ \p -> alloca $ \out -> do
      r <- c_register_namespace p (fromIntegral (length name)) out
      when (r /= 0) $ fail ("register_namespace " ++ name ++ ": " ++ show r)
      peek out
    command ns i act = do
      fp <- mkCommand (\_ _ _ -> act)
      r <- c_register_command ns i fp nullPtr
      when (r /= 0) $ fail ("register_command: " ++ show r)
    hook h act = do
      fp <- mkHook (\_ -> act)
      r <- c_add_hook h fp nullPtr
      when (r /= 0) $ fail ("add_hook: " ++ show r)

main :: IO ()
main = do
  args <- getArgs
  when ("--busy" `elem` args) $ () <$ forkIO (busy 0)
  when ("--heavy-light" `elem` args) $ () <$ forkIO (heavyLight 0)
  when ("--custom" `elem` args) registerCustom
  when ("--sigterm-handler" `elem` args) $ do
    main' <- myThreadId
    () <$ installHandler sigTERM (Catch (throwTo main' (ExitFailure 143))) Nothing
  commandLoop "probe" own
