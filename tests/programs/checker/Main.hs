-- SPDX-License-Identifier: BSD-3-Clause
{-# LANGUAGE BangPatterns #-}
-- | eventlog-check [--partial] FILE: judge an eventlog as a consumer would.
--
-- Two checks, both must pass:
--
-- 1. ghc-events (the parser ThreadScope and eventlog2html use) decodes every
--    event of the file.
-- 2. A structural walk, driven by the event sizes in the header as
--    ghc-events read it: every event is whole, every block holds exactly the
--    bytes its block marker announces (so no chunk was cut or spliced), the
--    end-of-data marker is present and nothing follows it. ghc-events alone
--    cannot tell: its decoder accepts a stream that simply stops.
--
-- With --partial a stream that stops early (a client that disconnected on
-- purpose) is accepted, and "partial" is printed. Exits 1 with
-- "parse-error MESSAGE" otherwise.
--
-- With --threads (after --partial, if any) it also prints every thread
-- event (for the threads views' tests):
--   thread create TIME CAP ID
--   thread run TIME CAP ID
--   thread stop TIME CAP ID STATUS   STATUS as ghc-events names it
--   thread runnable TIME CAP ID
--   thread migrate TIME CAP ID NEWCAP
--   thread wakeup TIME CAP ID OTHERCAP
--   thread label TIME ID TEXT
-- (CAP -1: the event is in no capability's block.)
--
-- Output, one item per line:
--   events N              events parsed (block markers are not events here)
--   types N               event types declared in the header
--   blocks N              block markers walked
--   span FIRST LAST       the earliest and latest event time (ns), as
--                         ghc-events reads them (none without events)
--   count NAME N          events per constructor name, e.g. count UserMarker 3
--   marker TIME TEXT      every traceMarker, with its timestamp (ns)
--   message TIME TEXT     every traceEvent / user message
--   binary TIME HEX       every binary user message (traceBinaryEvent), its
--                         payload in hex
--   sample TIME           every heap profile sample (HeapProfSampleBegin)
--   ccsample TIME         every cost-centre profiling sample (ProfSampleCostCentre)
--   ipe ADDR\tTABLE\tLABEL\tLOC  every info table's provenance (IPE, GHC >= 9.2), ADDR in hex
module Main (main) where

import Data.Bits (shiftL, (.|.))
import qualified Data.ByteString as B
import qualified Data.ByteString.Lazy as BL
import qualified Data.IntMap.Strict as IM
import qualified Data.Map.Strict as Map
import qualified Data.Text as T
import Data.Word (Word16)
import GHC.RTS.Events
import GHC.RTS.Events.Incremental (readEventLog, readHeader)
import System.Environment (getArgs)
import System.Exit (exitFailure)
import System.IO (hPutStrLn, stderr)
import Numeric (showHex)

data Walk = Walk {walkBlocks :: !Int, walkEnded :: !Bool}

be :: B.ByteString -> Int -> Int -> Int
be bs off n = foldl (\acc i -> acc `shiftL` 8 .|. fromIntegral (B.index bs (off + i))) 0 [0 .. n - 1]

-- | Walk the events after the header. Sizes: Nothing = variable (u16 length
-- after the timestamp). Returns Left on a structural error; Right with
-- walkEnded False when the input stops on an event boundary without the end
-- marker, or in the middle of an event if `partial`.
walk :: Bool -> IM.IntMap (Maybe Word16) -> B.ByteString -> Either String Walk
walk partial sizes bs = go 0 0 Nothing
  where
    len = B.length bs
    go :: Int -> Int -> Maybe Int -> Either String Walk
    go !pos !blocks blockEnd
      | pos == len = Right (Walk blocks False)
      | Just e <- blockEnd, pos > e = Left ("an event crosses the end of the block ending at byte " ++ show e)
      | len - pos < 2 = cut pos blocks
      | otherwise =
          let ty = be bs pos 2
           in if ty == 0xffff
                then
                  if pos + 2 == len
                    then Right (Walk blocks True)
                    else Left ("bytes follow the end-of-data marker at byte " ++ show pos)
                else case IM.lookup ty sizes of
                  Nothing -> Left ("undeclared event type " ++ show ty ++ " at byte " ++ show pos)
                  Just msize -> do
                    let headLen = case msize of Nothing -> 12; Just _ -> 10
                    if len - pos < headLen
                      then cut pos blocks
                      else do
                        let declared = maybe (be bs (pos + 10) 2) fromIntegral msize
                            payloadLen = if ty == 169 then ipeLen (pos + headLen) declared else declared
                            next = pos + headLen + payloadLen
                        if next > len
                          then cut pos blocks
                          else
                            if ty == 18
                              then do
                                let announced = be bs (pos + 10) 4
                                checkBoundary pos blockEnd
                                go next (blocks + 1) (Just (pos + announced))
                              else go next blocks blockEnd
    -- GHC 9.4+'s postIPE declares one byte more than it writes (it counts a
    -- NUL after the source file that it never writes): when the six strings
    -- after the address end one byte before the declared end, that byte is
    -- the next event's.
    ipeLen start declared
      | start + declared > len = declared
      | otherwise =
          let body = B.take declared (B.drop start bs)
              strEnd off = maybe Nothing (\i -> Just (off + i + 1)) (B.elemIndex 0 (B.drop off body))
              ends = foldl (\acc _ -> acc >>= strEnd) (Just 8) [1 .. 6 :: Int]
           in if ends == Just (declared - 1) then declared - 1 else declared
    checkBoundary pos (Just e)
      | pos /= e = Left ("block ending at byte " ++ show e ++ " has a new block at byte " ++ show pos)
    checkBoundary _ _ = Right ()
    cut pos blocks
      | partial = Right (Walk blocks False)
      | otherwise = Left ("the stream ends in the middle of an event at byte " ++ show pos)

constructorName :: EventInfo -> String
constructorName = takeWhile (/= ' ') . show

describe :: Event -> [String]
describe ev = case evSpec ev of
  UserMarker m -> ["marker " ++ show (evTime ev) ++ " " ++ T.unpack m]
  UserMessage m -> ["message " ++ show (evTime ev) ++ " " ++ T.unpack m]
  UserBinaryMessage b -> ["binary " ++ show (evTime ev) ++ " " ++ concatMap hex2 (B.unpack b)]
  HeapProfSampleBegin {} -> ["sample " ++ show (evTime ev)]
  ProfSampleCostCentre {} -> ["ccsample " ++ show (evTime ev)]
  HeapLive {liveBytes = b} -> ["heaplive " ++ show (evTime ev) ++ " " ++ show b]
  HeapSize {sizeBytes = b} -> ["heapsize " ++ show (evTime ev) ++ " " ++ show b]
  InfoTableProv {itInfo = a, itTableName = t, itLabel = l, itSrcLoc = loc} ->
    ["ipe 0x" ++ showHex a "" ++ "\t" ++ T.unpack t ++ "\t" ++ T.unpack l ++ "\t" ++ T.unpack loc]
  _ -> []

threadLines :: Event -> [String]
threadLines ev = case evSpec ev of
  CreateThread t -> ["thread create " ++ at ++ " " ++ show t]
  RunThread t -> ["thread run " ++ at ++ " " ++ show t]
  StopThread t st -> ["thread stop " ++ at ++ " " ++ show t ++ " " ++ constructorStatus st]
  ThreadRunnable t -> ["thread runnable " ++ at ++ " " ++ show t]
  MigrateThread t c -> ["thread migrate " ++ at ++ " " ++ show t ++ " " ++ show c]
  WakeupThread t c -> ["thread wakeup " ++ at ++ " " ++ show t ++ " " ++ show c]
  ThreadLabel t l -> ["thread label " ++ show (evTime ev) ++ " " ++ show t ++ " " ++ T.unpack l]
  _ -> []
  where
    at = show (evTime ev) ++ " " ++ show (maybe (-1) id (evCap ev))
    constructorStatus = takeWhile (/= ' ') . show

hex2 :: (Integral a, Show a) => a -> String
hex2 w = let h = showHex w "" in if length h < 2 then '0' : h else h

failWith :: String -> IO a
failWith problem = putStrLn ("parse-error " ++ problem) >> exitFailure

main :: IO ()
main = do
  argv <- getArgs
  let threads = "--threads" `elem` argv
  (partial, file) <- case filter (/= "--threads") argv of
    [f] -> pure (False, f)
    ["--partial", f] -> pure (True, f)
    _ -> hPutStrLn stderr "usage: eventlog-check [--partial] [--threads] FILE" >> exitFailure
  bytes <- BL.readFile file
  (hdr, rest) <- either failWith pure (readHeader bytes)
  evs <- case readEventLog bytes of
    Left err -> failWith err
    Right (EventLog _ (Data evs), Just err) | not partial -> failWith err >> pure evs
    Right (EventLog _ (Data evs), _) -> pure evs
  let sizes = IM.fromList [(fromIntegral (num t), size t) | t <- eventTypes hdr]
  w <- either failWith pure (walk partial sizes (BL.toStrict rest))
  if walkEnded w
    then pure ()
    else
      if partial
        then putStrLn "partial"
        else failWith "the stream ends before the end-of-data marker"
  let counts = Map.fromListWith (+) [(constructorName (evSpec e), 1 :: Int) | e <- evs]
  putStrLn ("events " ++ show (length evs))
  putStrLn ("types " ++ show (length (eventTypes hdr)))
  putStrLn ("blocks " ++ show (walkBlocks w))
  let times = map evTime evs
  if null times
    then pure ()
    else putStrLn ("span " ++ show (minimum times) ++ " " ++ show (maximum times))
  mapM_ (\(k, v) -> putStrLn ("count " ++ k ++ " " ++ show v)) (Map.toList counts)
  mapM_ (mapM_ putStrLn . describe) evs
  if threads then mapM_ (mapM_ putStrLn . threadLines) evs else pure ()
