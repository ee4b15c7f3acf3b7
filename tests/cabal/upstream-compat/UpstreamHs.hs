-- SPDX-License-Identifier: BSD-3-Clause
{-# OPTIONS_GHC -Werror=incomplete-patterns -Werror=missing-fields #-}

-- | upstream-hs with PATH | upstream-hs env: written against upstream
-- eventlog-socket 0.1.3's GHC.Eventlog.Socket only (imported whole and
-- unqualified, as upstream's examples do), so it compiles only if every name
-- it exports is here at its type.
--
-- It registers a POST_START hook that throws, another (the marker
-- "post-start N" on its Nth run),
-- a PRE_END hook (the marker "pre-end", and "pre-end hook ran" on stderr)
-- and a custom command, starts (startWith on PATH
-- waiting for a client, or startFromEnv), posts "main begins" and says so on
-- stdout, waits (60 s at most) until POST_START has run twice (the second
-- client's connection), posts "main ends" and returns.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Concurrent.MVar (modifyMVar_, newMVar, readMVar)
import Control.Exception (Exception (..), SomeException, toException, try)
import Data.Int (Int32)
import Data.Word (Word8)
import Debug.Trace (traceMarkerIO)
import Foreign.Storable (Storable (sizeOf))
import GHC.Eventlog.Socket
import System.Environment (getArgs)
import System.Exit (exitFailure)
import System.IO (hFlush, hPutStrLn, stderr, stdout)

-- Every function and value of upstream's export list, at upstream's type.
api ::
  ( EventlogSocketAddr -> EventlogSocketOpts -> IO (),
    EventlogSocketOpts,
    IO (),
    IO (Maybe (EventlogSocketAddr, EventlogSocketOpts)),
    Hook -> HookHandler -> IO (),
    String -> IO Namespace,
    Namespace -> CommandId -> CommandHandler -> IO (),
    Namespace -> IO String,
    (IO (), IO ()),
    (FilePath -> IO (), FilePath -> IO (), IO ())
  )
api =
  ( startWith,
    defaultEventlogSocketOpts,
    startFromEnv,
    fromEnv,
    registerHook,
    registerNamespace,
    registerCommand,
    namespaceName,
    (testWorkerStatus, testControlStatus),
    (startWait, start, wait)
  )

-- The constructors, fields and instances upstream's types have.
types :: [String]
types =
  [ show (EventlogSocketUnixAddr {esaUnixPath = "/p"} == EventlogSocketInetAddr "h" "1"),
    esaInetHost (EventlogSocketInetAddr {esaInetHost = "h", esaInetPort = "1"}),
    esaInetPort (EventlogSocketInetAddr "h" "1") ++ esaUnixPath (EventlogSocketUnixAddr "/p"),
    show (opts == opts, esoWait opts, esoSndbuf opts :: Maybe Int32, esoLinger opts :: Maybe Int32),
    show [addrError (EventlogSocketAddrUnixPathTooLong "/p"), addrError (EventlogSocketAddrInetHostMissing "1"),
          addrError (EventlogSocketAddrInetPortMissing "h")],
    show
      [ controlError (EventlogSocketControlNamespaceTooLong "n" (1 :: Int) (2 :: Int)),
        controlError (EventlogSocketControlNamespaceExists "n"),
        controlError (EventlogSocketControlCommandExists "n" (CommandId (1 :: Word8))),
        controlError EventlogSocketControlUnsupported
      ],
    show (HookPostStartEventLogging == HookPreEndEventLogging, sizeOf HookPostStartEventLogging),
    hookName HookPreEndEventLogging,
    show (CommandId 3 == CommandId 3)
  ]
  where
    opts = defaultEventlogSocketOpts {esoWait = True, esoSndbuf = Just 65536, esoLinger = Just 1}
    addrError :: EventlogSocketAddrError -> SomeException
    addrError e = toException e
    controlError :: EventlogSocketControlError -> String
    controlError e = show e ++ displayException e

-- Upstream declares the two hooks COMPLETE: no warning (an error here).
hookName :: Hook -> String
hookName HookPostStartEventLogging = "post-start"
hookName HookPreEndEventLogging = "pre-end"

main :: IO ()
main = do
  args <- getArgs
  let (startWith', _, startFromEnv', _, registerHook', registerNamespace', registerCommand', namespaceName', (testWorker, testControl), _) = api
  putStrLn (show (length (concat types)) ++ " characters of types")
  runs <- newMVar (0 :: Int)
  -- A hook that throws: the library prints it, the next hook still runs.
  registerHook' HookPostStartEventLogging (ioError (userError "hook boom"))
  -- The marker before the count goes up: main posts "main ends" after it.
  registerHook' HookPostStartEventLogging $ modifyMVar_ runs $ \k -> do
    traceMarkerIO ("post-start " ++ show (k + 1))
    pure (k + 1)
  registerHook' HookPreEndEventLogging (traceMarkerIO "pre-end" >> hPutStrLn stderr "pre-end hook ran")
  ns <- registerNamespace' "upstream-hs"
  registerCommand' ns (CommandId 1) (traceMarkerIO "command 1")
  taken <- try (registerNamespace' "upstream-hs")
  name <- namespaceName' ns
  putStrLn ("namespace " ++ name ++ ", again: " ++ either (\e -> show (e :: EventlogSocketControlError)) (const "accepted") taken)
  case args of
    ["with", path] -> startWith' (EventlogSocketUnixAddr path) defaultEventlogSocketOpts {esoWait = True}
    ["env"] -> startFromEnv'
    _ -> putStrLn "usage: upstream-hs with PATH | env" >> exitFailure
  traceMarkerIO "main begins"
  putStrLn "main begins"
  hFlush stdout
  let await :: Int -> IO Bool
      await 0 = pure False
      await k = do
        n <- readMVar runs
        if n >= 2 then pure True else threadDelay 10000 >> await (k - 1)
  seen <- await 6000
  testWorker
  testControl
  traceMarkerIO "main ends"
  if seen then putStrLn "main ends" else putStrLn "no second POST_START" >> exitFailure
