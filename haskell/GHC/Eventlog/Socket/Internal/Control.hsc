-- SPDX-License-Identifier: BSD-3-Clause
{-# LANGUAGE GeneralizedNewtypeDeriving #-}
{-# LANGUAGE PatternSynonyms #-}

-- |
-- Custom control commands and hooks of "GHC.Eventlog.Socket": namespaces,
-- commands and their handlers, the hook points and their handlers.
-- Internal: not exposed; "GHC.Eventlog.Socket" re-exports what users see
-- ('Hook' without its constructor).
--
-- Thread: registration on the program's own threads; the handlers run on
-- threads of the library's (one per namespace for commands), each guarded so
-- that an exception is printed, not thrown into the library.
module GHC.Eventlog.Socket.Internal.Control
  ( Namespace (..),
    CommandId (..),
    CommandHandler,
    EventlogSocketControlError (..),
    namespaceName,
    registerNamespace,
    registerCommand,
    Hook (..),
    pattern HookPostStartEventLogging,
    pattern HookPreEndEventLogging,
    EventlogSocketHook,
    pattern EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING,
    pattern EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING,
    HookHandler,
    registerHook,
  )
where

import Control.Exception (Exception (..), throwIO)
import Control.Monad (when)
import Data.Word (Word32, Word8)
import Foreign.C.String (peekCString, withCStringLen)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Ptr (Ptr, freeHaskellFunPtr, nullPtr)
import Foreign.Storable (Storable, peek)
import GHC.Eventlog.Socket.Internal.Foreign

#include "eventlog_socket.h"

-- | A namespace of control commands, from 'registerNamespace'.
newtype Namespace = Namespace (Ptr ())

-- | A command's id in its namespace, 1 to 255.
newtype CommandId = CommandId Word8
  deriving (Eq, Show)

-- | What runs when a client sends the command. It runs on a thread of the
-- library's (one per namespace, so a slow handler holds up only its own
-- namespace's commands), never while the RTS is starting or exiting. An
-- exception it throws is printed to stderr and otherwise ignored.
type CommandHandler = IO ()

-- | The errors of 'registerNamespace' and 'registerCommand'.
data EventlogSocketControlError
  = -- | The name, its length in bytes and the most allowed (255).
    EventlogSocketControlNamespaceTooLong String Int Int
  | -- | The name is registered already, or is the reserved
    -- @eventlog-socket@.
    EventlogSocketControlNamespaceExists String
  | -- | The namespace's name and the id that is registered already.
    EventlogSocketControlCommandExists String CommandId
  | -- | Never thrown by this library (control commands are always
    -- supported); kept for upstream's programs.
    EventlogSocketControlUnsupported
  deriving (Eq, Show)

instance Exception EventlogSocketControlError where
  displayException e = case e of
    EventlogSocketControlNamespaceTooLong name len most ->
      "the namespace name " ++ show name ++ " is " ++ show len
        ++ " bytes long; at most " ++ show most ++ " are allowed"
    EventlogSocketControlNamespaceExists name ->
      "the namespace " ++ show name ++ " is registered already"
        ++ (if name == "eventlog-socket" then " (it is the library's own)" else "")
    EventlogSocketControlCommandExists name (CommandId i) ->
      "command " ++ show i ++ " of namespace " ++ show name ++ " is registered already"
    EventlogSocketControlUnsupported ->
      "control commands are not supported (never thrown by this library)"

-- | The name a namespace was registered with.
namespaceName :: Namespace -> IO String
namespaceName (Namespace p) = c_namespace_name p >>= peekCString

-- | Register a namespace for control commands. Use your package's name, to
-- stay clear of others.
registerNamespace :: String -> IO Namespace
registerNamespace name = withCStringLen name $ \(p, len) ->
  if len > 255
    then throwIO (EventlogSocketControlNamespaceTooLong name len 255)
    else alloca $ \out -> do
      r <- c_register_namespace p (fromIntegral len) out
      case r of
        0 -> Namespace <$> peek out
        _
          | r == #{const EVENTLOG_SOCKET_EEXIST} || name == "eventlog-socket" ->
              throwIO (EventlogSocketControlNamespaceExists name)
          | otherwise -> throwError "registerNamespace" r

-- | Register a command of a namespace: a client sending (namespace, id) in
-- upstream framing makes @handler@ run.
registerCommand :: Namespace -> CommandId -> CommandHandler -> IO ()
registerCommand ns@(Namespace p) cid@(CommandId i) handler = do
  name <- namespaceName ns
  let label = name ++ "/" ++ show i
  fp <- mkCommandFn (\_ _ _ -> guarded ("command " ++ label) handler)
  r <- c_register_command p i fp nullPtr
  when (r /= 0) $ do
    freeHaskellFunPtr fp
    if r == #{const EVENTLOG_SOCKET_EEXIST}
      then throwIO (EventlogSocketControlCommandExists name cid)
      else throwError "registerCommand" r

-- | When a hook runs (see 'registerHook'): 'HookPostStartEventLogging' or
-- 'HookPreEndEventLogging'.
newtype Hook = Hook {unHook :: #{type EventlogSocketHook}}
  deriving (Eq, Show, Storable)

-- | Once event logging runs: for a Haskell @main@, inside
-- 'GHC.Eventlog.Socket.startWith' (and 'GHC.Eventlog.Socket.startFromEnv',
-- 'GHC.Eventlog.Socket.start', 'GHC.Eventlog.Socket.startWait'), on the
-- calling thread, before it returns; for a C @main@, on the main thread before @main@ starts. Register
-- the hook before that. The first client gets what the hook posted then
-- (it gets the stream from its start); each later client gets a run of its
-- own, after it has joined, on a thread of the library's, so what the hook
-- posts (your own start-up messages, say) reaches it. A hook registered
-- after the start runs once at registration, then for each later client.
pattern HookPostStartEventLogging :: Hook
pattern HookPostStartEventLogging = Hook #{const EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING}

-- | At the beginning of the program's exit, while clients still receive
-- events. Event logging ends only then: a client coming or going ends
-- nothing.
pattern HookPreEndEventLogging :: Hook
pattern HookPreEndEventLogging = Hook #{const EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING}

{-# COMPLETE HookPostStartEventLogging, HookPreEndEventLogging #-}

-- | The name of 'Hook' in this package's 0.2.
type EventlogSocketHook = Hook

-- | 'HookPostStartEventLogging', by its name in this package's 0.2.
pattern EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING :: Hook
pattern EVENTLOG_SOCKET_HOOK_POST_START_EVENT_LOGGING = HookPostStartEventLogging

-- | 'HookPreEndEventLogging', by its name in this package's 0.2.
pattern EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING :: Hook
pattern EVENTLOG_SOCKET_HOOK_PRE_END_EVENT_LOGGING = HookPreEndEventLogging

-- | What a hook runs; an exception it throws is printed to stderr and the
-- program goes on. It must not call this module's functions.
type HookHandler = IO ()

-- The name error messages give a hook. Compared by value, not matched
-- against the pattern synonyms: no GHC can then find a case missing.
hookLabel :: Hook -> String
hookLabel hook
  | hook == HookPostStartEventLogging = "POST_START"
  | hook == HookPreEndEventLogging = "PRE_END"
  | otherwise = show (unHook hook)

-- | Run @handler@ at @hook@, after the handlers registered before it.
-- Hooks cannot be unregistered.
registerHook :: Hook -> HookHandler -> IO ()
registerHook hook@(Hook h) handler = do
  fp <- mkHookFn (\_ -> guarded ("hook " ++ hookLabel hook) handler)
  r <- c_add_hook h fp nullPtr
  when (r /= 0) $ freeHaskellFunPtr fp >> throwError "registerHook" r
