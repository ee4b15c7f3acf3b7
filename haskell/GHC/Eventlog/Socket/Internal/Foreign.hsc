-- SPDX-License-Identifier: BSD-3-Clause
-- |
-- The C library's functions as "GHC.Eventlog.Socket" calls them: every
-- foreign import of the package, the opaque structs whose layout hsc2hs
-- gives, and the turning of an error code into an exception. Internal: not
-- exposed; "GHC.Eventlog.Socket" re-exports what users see.
--
-- Thread: the calls are made on the program's own threads (whichever calls
-- the public function); the wrappers' function pointers are called by the
-- library on threads of its own, through 'guarded'.
module GHC.Eventlog.Socket.Internal.Foreign
  ( -- * The structs, opaque
    Options,
    Stats,
    EnvConfig,

    -- * Errors
    check,
    refusable,
    checkWith,
    throwError,
    guarded,

    -- * Callbacks
    CommandFn,
    HookFn,
    mkCommandFn,
    mkHookFn,

    -- * The C functions
    c_register_namespace,
    c_register_command,
    c_add_hook,
    c_namespace_name,
    c_strerror,
    c_options_init,
    c_set_options,
    c_set_flush_interval_ms,
    c_start_unix,
    c_start_tcp,
    c_wait,
    c_stats,
    c_tcp_port,
    c_last_error,
    c_config_defaults,
    c_config_from_env,
    c_event_classes,
    c_switch_event_classes,
  )
where

import Control.Exception (SomeException, catch)
import Control.Monad (when)
import Data.Word (Word32, Word8)
import Foreign.C.String (CString, peekCString)
import Foreign.C.Types (CChar, CInt (..), CSize (..), CUInt (..))
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (FunPtr, Ptr)
import qualified GHC.Foreign
import GHC.IO.Encoding.Failure (CodingFailureMode (TransliterateCodingFailure))
import GHC.IO.Encoding.UTF8 (mkUTF8)

#include "eventlog_socket.h"

-- | Throw an 'IOError' with the library's message for a negative result.
check :: CInt -> IO ()
check r = when (r < 0) $ do
  msg <- peekCString =<< c_strerror r
  ioError (userError ("eventlog-socket: " ++ msg))

-- | Make a call that the library may refuse, with room for the line that
-- says why (the library writes it to stderr before the call returns):
-- the call's result and that line (empty when nothing was logged).
refusable :: (Ptr CChar -> CSize -> IO CInt) -> IO (CInt, String)
refusable call = allocaBytes size $ \buf -> do
  r <- call buf (fromIntegral size)
  why <- peekCString buf
  pure (r, why)
  where
    size = 512

-- | 'check', with the line that said why ('refusable') as the message when
-- there is one: it names the variable or field, the value, what is taken.
checkWith :: String -> CInt -> IO ()
checkWith why r = when (r < 0) $ do
  msg <- if null why then peekCString =<< c_strerror r else pure why
  ioError (userError ("eventlog-socket: " ++ msg))

-- The options and stats structs are opaque here: hsc2hs gives their layout.
data Options

data Stats

data EnvConfig

-- | A handler's exception must not escape into the library's thread (the
-- RTS would end the program): log it instead, as one line of the library's
-- (stderr's handle would write it a character at a time, cut into by any
-- other thread's line). The line is UTF-8 whatever the locale, with "?"
-- for a character UTF-8 cannot carry (a lone surrogate): telling must not
-- throw in its turn, nor may an exception whose message is itself an error.
guarded :: String -> IO () -> IO ()
guarded what act =
  act `catch` \e ->
    tell (what ++ " failed: " ++ show (e :: SomeException)) `catch` unshowable
  where
    tell text = GHC.Foreign.withCString (mkUTF8 TransliterateCodingFailure) text c_log
    unshowable :: SomeException -> IO ()
    unshowable _ = tell (what ++ " failed, with an exception whose message is itself an error")

-- | Throw an 'IOError' with the library's message for the code, after @what@.
throwError :: String -> CInt -> IO a
throwError what r = do
  msg <- c_strerror r >>= peekCString
  ioError (userError (what ++ ": " ++ msg))

type CommandFn = Ptr () -> Word8 -> Ptr () -> IO ()

type HookFn = Ptr () -> IO ()

foreign import ccall "wrapper" mkCommandFn :: CommandFn -> IO (FunPtr CommandFn)

foreign import ccall "wrapper" mkHookFn :: HookFn -> IO (FunPtr HookFn)

foreign import ccall safe "eventlog_socket_register_namespace"
  c_register_namespace :: CString -> CSize -> Ptr (Ptr ()) -> IO CInt

foreign import ccall safe "eventlog_socket_register_command"
  c_register_command :: Ptr () -> Word8 -> FunPtr CommandFn -> Ptr () -> IO CInt

foreign import ccall safe "eventlog_socket_add_hook"
  c_add_hook :: #{type EventlogSocketHook} -> FunPtr HookFn -> Ptr () -> IO CInt

foreign import ccall unsafe "eventlog_socket_namespace_name"
  c_namespace_name :: Ptr () -> IO CString

-- The library's log (rts-writer/haskell.c): formats into its buffer and
-- returns; its own thread writes the line out.
foreign import ccall unsafe "es_haskell_log"
  c_log :: CString -> IO ()

foreign import ccall unsafe "eventlog_socket_error_message"
  c_strerror :: CInt -> IO CString

foreign import ccall unsafe "eventlog_socket_options_init"
  c_options_init :: Ptr Options -> IO ()

-- The calls that can be refused take room for the line that says why
-- (rts-writer/haskell.c).
foreign import ccall safe "es_haskell_set_options"
  c_set_options :: Ptr Options -> Ptr CChar -> CSize -> IO CInt

foreign import ccall safe "eventlog_socket_set_flush_interval_ms"
  c_set_flush_interval_ms :: CUInt -> IO CInt

-- Safe calls: they stop and start event logging, and may wait for a client;
-- the calling thread must not hold a capability meanwhile.
foreign import ccall safe "es_haskell_start_unix"
  c_start_unix :: CString -> CInt -> Ptr CChar -> CSize -> IO CInt

foreign import ccall safe "es_haskell_start_tcp"
  c_start_tcp :: CString -> CString -> CInt -> Ptr CChar -> CSize -> IO CInt

foreign import ccall safe "eventlog_socket_wait_for_client"
  c_wait :: IO CInt

foreign import ccall unsafe "eventlog_socket_stats"
  c_stats :: Ptr Stats -> IO CInt

foreign import ccall unsafe "eventlog_socket_tcp_port"
  c_tcp_port :: IO CInt

foreign import ccall unsafe "eventlog_socket_last_error"
  c_last_error :: IO CInt

-- The library's own configuration reader (cbits/base/es_config.h): the defaults,
-- then the environment on top, with the same messages as the C API.
foreign import ccall unsafe "es_config_defaults"
  c_config_defaults :: Ptr EnvConfig -> IO ()

foreign import ccall safe "es_haskell_config_from_env"
  c_config_from_env :: Ptr EnvConfig -> Ptr CChar -> CSize -> IO CInt

foreign import ccall unsafe "eventlog_socket_event_classes"
  c_event_classes :: Ptr CUInt -> Ptr CUInt -> IO CInt

foreign import ccall safe "es_haskell_switch_event_classes"
  c_switch_event_classes :: CUInt -> CUInt -> Ptr CChar -> CSize -> IO CInt
