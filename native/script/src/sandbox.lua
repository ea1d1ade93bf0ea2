-- Runs once in each new Lua state, before any script: builds the `redis` library, takes away what
-- a script must not reach (files, the debug library, the module system), and returns the runners
-- of scripts, of functions' libraries and of functions.
-- Redis 7.0 is the model for every name and message here.
--
-- `bridge` is a table the Rust side fills (lib.rs): `redis_call` and `redis_pcall`; `redis_api`,
-- the rest of the library's C functions (redis_api.rs); `bit`, `cjson`, `cmsgpack` and `struct`;
-- `version` and `version_num`; `ending()`, whether the run is being ended; `protect(proxy, shown)`, which registers a read-only proxy (readonly.rs), and `loaders(env)`,
-- which makes the `loadstring` and `load` of code that runs in `env` (chunks.rs).
local bridge = ...

local getinfo = debug.getinfo
local type, tostring, error, select, rawpcall, rawget = type, tostring, error, select, pcall, rawget
local setmetatable, setfenv, xpcall, ipairs, pairs = setmetatable, setfenv, xpcall, ipairs, pairs
local find, sub, gsub, lower = string.find, string.sub, string.gsub, string.lower
local real = _G

local redis = {
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_SLAVE = 1, REPL_REPLICA = 1, REPL_AOF = 2, REPL_ALL = 3,
  REDIS_VERSION = bridge.version, REDIS_VERSION_NUM = bridge.version_num,
}

-- redis.call and redis.pcall are C functions (call.rs), so `return redis.call(...)` is not a tail
-- call that takes the script's line out of the stack the error handler reads.
redis.call, redis.pcall = bridge.redis_call, bridge.redis_pcall

-- sha1hex, error_reply, status_reply, log, setresp, set_repl and acl_check_cmd: C functions, as
-- Redis's are (redis_api.rs).
for name, f in pairs(bridge.redis_api) do redis[name] = f end
function redis.replicate_commands() return true end
function redis.breakpoint() return false end
function redis.debug() end

-- Lua's pcall, except that an error table carrying `err` comes back as its text: Redis 7.0 hands
-- a script the message of a redis.call that failed, not the table.
local function caught(ok, ...)
  if ok then return true, ... end
  local e = ...
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then return false, e.err end
  return false, e
end
function pcall(f, ...) return caught(rawpcall(f, ...)) end

-- Lua's xpcall, except that the script's handler is skipped while the run is being ended (SCRIPT
-- KILL, a library past its load time): that error is raised from Lua's hook, which runs handlers
-- with hooks off, so a handler that looped would never be stopped.
local ending = bridge.ending
real.xpcall = function(f, h)
  return xpcall(f, function(e)
    if ending() then return e end
    return h(e)
  end)
end

-- A table a script can read and not change: an empty proxy, registered so that rawset,
-- table.insert and setmetatable refuse it too. `shown` is what getmetatable shows of it (nil:
-- nothing, as Redis shows of a library).
local protect = bridge.protect
local function refuse_write() error('Attempt to modify a readonly table', 2) end
local function readonly(t, shown)
  local proxy = setmetatable({}, { __index = t, __newindex = refuse_write, __metatable = false })
  protect(proxy, shown)
  return proxy
end

real.redis = readonly(redis)
real.bit = readonly(bridge.bit)
real.cjson = readonly(bridge.cjson)
real.cmsgpack = readonly(bridge.cmsgpack)
real.struct = readonly(bridge.struct)
for _, name in ipairs({ 'string', 'table', 'math', 'coroutine' }) do real[name] = readonly(real[name]) end
-- Every string shares one metatable, whose __index is the string library itself (for s:upper()):
-- getmetatable('') shows a read-only copy of it instead, whose __index is the read-only `string`,
-- so no script can change the methods of every other script's strings (CVE-2025-46818).
getmetatable('').__metatable = readonly({ __index = real.string })
-- Lua's own loaders would load bytecode and give a chunk the sandbox's own globals: each
-- environment below gets its own (chunks.rs).
real.loadstring, real.load = nil, nil
for _, name in ipairs({ 'dofile', 'loadfile', 'print', 'setfenv', 'getfenv', 'newproxy', 'module',
                        'require', 'debug', 'os', 'io', 'package' }) do
  real[name] = nil
end

-- The globals as scripts see them: a read-only view of `names`, and an error for a name that is
-- not there (a misspelt local would otherwise read nil, or write a global the next script sees).
-- A read of a name that is there is a plain table lookup (env's __index is `names` itself): with
-- a Lua function as __index every global read cost a call, ~90 ns, a fifth of a short script's
-- run. Only a name that is missing reaches the function that raises the error.
local function nonexistent(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end
local function environment(names)
  setmetatable(names, { __index = nonexistent, __metatable = false })
  local meta = { __index = names, __newindex = refuse_write, __metatable = false }
  local env = setmetatable({}, meta)
  -- Redis's globals show a metatable whose __index refuses an unknown name.
  protect(env, readonly({ __index = nonexistent }))
  return env, meta
end

-- `names` for scripts: the sandboxed globals, copied here once they are complete (nothing changes
-- them after this file has run), and KEYS and ARGV, which each run fills (lib.rs, run.rs).
local script_names = {}
for name, value in pairs(real) do script_names[name] = value end
local env = environment(script_names)
script_names.loadstring, script_names.load = bridge.loaders(env)
real._G = env
script_names._G = env

-- The message of an error a Rust function of the libraries raised (cjson's, say): mlua hands it
-- over as a userdata whose text is "runtime error: <message>" and a traceback.
local function rust_message(e)
  local text = gsub(tostring(e), '^runtime error: ', '')
  local cut = find(text, '\nstack traceback:', 1, true)
  return cut and sub(text, 1, cut - 1) or text
end

-- Makes whatever was raised into an error table, { err = text, source, line }, with the position
-- Redis's handler gives: that of the function that raised it, or of its caller when that function
-- is a C one (the script's line where it called redis.call, say). The functions this file defines
-- stand for Redis's C ones: an error they raise is their caller's too.
local SANDBOX_SOURCE = '=svc_sandbox'
local function handler(e)
  local level = 2
  local info = getinfo(level, 'Sl')
  if info and info.what == 'C' then
    level = level + 1
    info = getinfo(level, 'Sl')
  end
  while info and info.source == SANDBOX_SOURCE do
    level = level + 1
    info = getinfo(level, 'Sl')
  end
  if type(e) == 'userdata' then
    -- Prefixed with the caller's position, as luaL_error prefixes a C function's message.
    local at = (info and info.currentline > 0) and (info.short_src .. ':' .. info.currentline .. ': ') or ''
    e = at .. rust_message(e)
  end
  if type(e) ~= 'table' then e = { err = 'ERR ' .. tostring(e) } end
  if info then e.source, e.line = info.source, info.currentline end
  return e
end

-- Functions (FUNCTION LOAD, FCALL). A library's code runs once, when it is loaded, with a
-- `redis` that holds only what a library may use then — register_function, log, the constants —
-- and the functions it registers run later with the full `redis` less register_function, their
-- keys and arguments given as parameters rather than as KEYS and ARGV. Messages are Redis 7.0's.
local registering -- the functions of the library being loaded, while it loads
local function refuse(message) error({ err = 'ERR ' .. message }, 0) end

-- The flags a function may declare, in Redis's order (FUNCTION LIST shows them so).
local flag_names = { 'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys' }

-- A function's flags table as Redis 7.0 reads it: items 1, 2, … up to the first nil, each a
-- string (or number) naming a flag in any case; the flags it names, canonical, in Redis's order.
local function check_flags(flags)
  if type(flags) ~= 'table' then refuse('flags argument to redis.register_function must be a table representing function flags') end
  local given = {}
  local i = 1
  while flags[i] ~= nil do
    local flag = flags[i]
    if type(flag) ~= 'string' and type(flag) ~= 'number' then refuse('unknown flag given') end
    given[lower(tostring(flag))] = true
    i = i + 1
  end
  local known, canonical = 0, {}
  for _, name in ipairs(flag_names) do
    if given[name] then
      known = known + 1
      canonical[#canonical + 1] = name
    end
  end
  for _ in pairs(given) do known = known - 1 end
  if known ~= 0 then refuse('unknown flag given') end
  return canonical
end

-- A string argument as Redis's luaGetStringSds takes one: a string, or a number as its text.
local function text_of(value)
  if type(value) == 'string' or type(value) == 'number' then return tostring(value) end
  return nil
end

local load_api = {
  LOG_DEBUG = redis.LOG_DEBUG, LOG_VERBOSE = redis.LOG_VERBOSE, LOG_NOTICE = redis.LOG_NOTICE,
  LOG_WARNING = redis.LOG_WARNING, REDIS_VERSION = redis.REDIS_VERSION, REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM,
  log = redis.log,
}
function load_api.register_function(...)
  -- A library can keep `redis` of its load in an upvalue and call this from a function later:
  -- refused then, as Redis refuses it without a load under way, before reading the arguments.
  if registering == nil then refuse('redis.register_function can only be called on FUNCTION LOAD command') end
  local count = select('#', ...)
  if count < 1 or count > 2 then refuse('wrong number of arguments to redis.register_function') end
  local name, callback, flags, description
  if count == 1 then
    local args = ...
    if type(args) ~= 'table' then
      refuse('calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).')
    end
    -- Keys in any case, checked in the order next() gives them, as Redis's lua_next loop does.
    for key, value in pairs(args) do
      local word = text_of(key)
      if word == nil then refuse('named argument key given to redis.register_function is not a string') end
      word = lower(word)
      if word == 'function_name' then
        name = text_of(value) or refuse('function_name argument given to redis.register_function must be a string')
      elseif word == 'description' then
        description = text_of(value) or refuse('description argument given to redis.register_function must be a string')
      elseif word == 'callback' then
        if type(value) ~= 'function' then refuse('callback argument given to redis.register_function must be a function') end
        callback = value
      elseif word == 'flags' then
        flags = check_flags(value)
      else
        refuse('unknown argument given to redis.register_function')
      end
    end
    if name == nil then refuse('redis.register_function must get a function name argument') end
    if callback == nil then refuse('redis.register_function must get a callback argument') end
  else
    local first, second = ...
    name = text_of(first) or refuse('first argument to redis.register_function must be a string')
    if type(second) ~= 'function' then refuse('second argument to redis.register_function must be a function') end
    callback = second
  end
  if not find(name, '^[%w_]+$') then
    refuse('Library names can only contain letters, numbers, or underscores(_) and must be at least one character long')
  end
  for _, registered in ipairs(registering) do
    if registered.name == name then refuse('Function already exists in the library') end
  end
  registering[#registering + 1] = { name = name, callback = callback, flags = flags or {}, description = description }
end

-- A library's globals. While its code runs to register its functions, Redis 7.0 shows it one name
-- only, `redis`, the load API; once loaded, its functions see the scripts' globals less KEYS and
-- ARGV (a function gets its keys and arguments as parameters). One environment, whose names are
-- swapped, as Redis swaps its globals' __index.
local library_names = {}
for name, value in pairs(real) do library_names[name] = value end
local library_env, library_meta = environment(library_names)
library_names.loadstring, library_names.load = bridge.loaders(library_env)
library_names._G = library_env
local load_names = {}
for name, value in pairs(load_api) do load_names[name] = value end
local loading_names = setmetatable({ redis = environment(load_names) }, { __index = nonexistent, __metatable = false })

return {
  -- What lib.rs's run_entry runs scripts and functions with: the error handler, as the error
  -- function of its lua_pcall (what xpcall is), the scripts' environment, set on each script
  -- when it is compiled, and the names that environment shows, with the KEYS and ARGV each run fills.
  handler = handler,
  env = env,
  script_names = script_names,
  -- Runs a library's code: true and the functions it registered ({ name, callback, flags,
  -- description } each), or false and an error table.
  library = function(code)
    setfenv(code, library_env)
    registering, library_meta.__index = {}, loading_names
    local ok, e = xpcall(code, handler)
    local registered = registering
    registering, library_meta.__index = nil, library_names
    if not ok then return false, e end
    return true, registered
  end,
}
