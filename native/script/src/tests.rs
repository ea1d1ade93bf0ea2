//! The conversions and the sandbox, with a host that answers each command from a table of replies
//! (the server itself is exercised end to end by test/kv/scripting/scripting.test.ts).

use std::time::Duration;

use super::{Host, Outcome, Scripts, BUSY_SLICE};

/// The Lua state's memory limit in these tests.
const MEMORY: usize = 64 * 1024 * 1024;

/// Answers every command with the reply listed for its name; records what it was asked.
struct Replies {
    replies: Vec<(&'static str, &'static str)>,
    asked: Vec<Vec<String>>,
    logged: Vec<(u8, String)>,
    /// What elapsed() answers: how long the script's command had run before its first check.
    ran: Duration,
    /// How many times elapsed() was asked.
    elapsed_asked: usize,
}

impl Host for Replies {
    fn elapsed(&mut self) -> Duration {
        self.elapsed_asked += 1;
        self.ran
    }
    fn call(&mut self, args: &[&[u8]]) -> &[u8] {
        self.asked.push(args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect());
        let name = String::from_utf8_lossy(args[0]).to_lowercase();
        let (_, reply) = self.replies.iter().find(|(n, _)| *n == name).expect("a reply for every command asked");
        reply.as_bytes()
    }
    fn log(&mut self, level: u8, text: &[u8]) {
        self.logged.push((level, String::from_utf8_lossy(text).into_owned()));
    }
}

fn host() -> Replies {
    Replies {
        replies: vec![
            ("get", "$3\r\nabc\r\n"),
            ("nil", "$-1\r\n"),
            ("set", "+OK\r\n"),
            ("ping", "+PONG\r\n"),
            ("incr", "-ERR value is not an integer or out of range\r\n"),
            ("lrange", "*3\r\n:1\r\n$-1\r\n*1\r\n+x\r\n"),
        ],
        asked: Vec::new(),
        logged: Vec::new(),
        ran: Duration::ZERO,
        elapsed_asked: 0,
    }
}

fn eval(scripts: &Scripts, body: &str, keys: &[&str], argv: &[&str], host: &mut Replies) -> String {
    let sha = sha1_smol::Sha1::from(body).digest().to_string();
    let id = scripts.load(&sha, body.as_bytes()).expect("compiles");
    let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
    let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let reply = scripts.run(id, &keys, &argv, host);
    String::from_utf8(reply[1..].to_vec()).unwrap()
}

#[test]
fn lua_values_become_replies() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    assert_eq!(eval(&scripts, "return 3.99", &[], &[], h), ":3\r\n");
    assert_eq!(eval(&scripts, "return -3.99", &[], &[], h), ":-3\r\n");
    assert_eq!(eval(&scripts, "return 1e300", &[], &[], h), ":-9223372036854775808\r\n");
    assert_eq!(eval(&scripts, "return 'a' .. 'b'", &[], &[], h), "$2\r\nab\r\n");
    assert_eq!(eval(&scripts, "return true", &[], &[], h), ":1\r\n");
    assert_eq!(eval(&scripts, "return false", &[], &[], h), "$-1\r\n");
    assert_eq!(eval(&scripts, "return nil", &[], &[], h), "$-1\r\n");
    assert_eq!(eval(&scripts, "return {1, 'x', {2}, nil, 5}", &[], &[], h), "*3\r\n:1\r\n$1\r\nx\r\n*1\r\n:2\r\n");
    assert_eq!(eval(&scripts, "return {ok = 'fine\\r\\nthen'}", &[], &[], h), "+fine  then\r\n");
    assert_eq!(eval(&scripts, "return {err = 'bad one'}", &[], &[], h), "-bad one\r\n");
    assert_eq!(eval(&scripts, "return {ok = 'a', err = 'b'}", &[], &[], h), "-b\r\n");
    assert_eq!(eval(&scripts, "return redis.error_reply('bad')", &[], &[], h), "-ERR bad\r\n");
    assert_eq!(eval(&scripts, "return redis.error_reply('-E1 z')", &[], &[], h), "-E1 z\r\n");
    assert_eq!(eval(&scripts, "return redis.status_reply('S')", &[], &[], h), "+S\r\n");
    assert_eq!(eval(&scripts, "return tostring(10/2)", &[], &[], h), "$1\r\n5\r\n");
    assert_eq!(eval(&scripts, "local t = {} t[1] = t return t", &[], &[], h).matches('*').count(), 1000);
}

#[test]
fn replies_become_lua_values() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    assert_eq!(eval(&scripts, "return redis.call('get', KEYS[1])", &["k"], &[], h), "$3\r\nabc\r\n");
    assert_eq!(eval(&scripts, "return type(redis.call('nil'))", &[], &[], h), "$7\r\nboolean\r\n");
    assert_eq!(eval(&scripts, "return redis.call('set', 'k', 'v').ok", &[], &[], h), "$2\r\nOK\r\n");
    assert_eq!(eval(&scripts, "local r = redis.call('lrange') return {r[1], tostring(r[2]), r[3][1].ok}", &[], &[], h), "*3\r\n:1\r\n$5\r\nfalse\r\n$1\r\nx\r\n");
    assert_eq!(eval(&scripts, "return redis.pcall('incr', 'k')", &[], &[], h), "-ERR value is not an integer or out of range\r\n");
    let body = "\nreturn redis.call('incr', 'k')";
    let sha = sha1_smol::Sha1::from(body).digest().to_string();
    assert_eq!(eval(&scripts, body, &[], &[], h), format!("-ERR value is not an integer or out of range script: {sha}, on @user_script:2.\r\n"));
    assert_eq!(eval(&scripts, "local ok, e = pcall(redis.call, 'incr', 'k') return e", &[], &[], h), "$43\r\nERR value is not an integer or out of range\r\n");
}

#[test]
fn arguments_are_strings_or_numbers() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    eval(&scripts, "return redis.call('get', 1/3, 100, 1e20, KEYS[1], ARGV[1])", &["k"], &["a"], h);
    assert_eq!(h.asked.last().unwrap(), &["get", "0.33333333333333331", "100", "1e+20", "k", "a"]);
    // redis.pcall returns its own misuse as an error table; redis.call raises it.
    assert_eq!(eval(&scripts, "return redis.pcall('get', {})", &[], &[], h), "-ERR Lua redis lib command arguments must be strings or integers\r\n");
    assert_eq!(eval(&scripts, "return redis.pcall()", &[], &[], h), "-ERR Please specify at least one argument for this redis lib call\r\n");
    let reply = eval(&scripts, "return redis.call('get', {})", &[], &[], h);
    assert!(reply.starts_with("-ERR Lua redis lib command arguments must be strings or integers script: "), "{reply}");
    let reply = eval(&scripts, "return redis.call()", &[], &[], h);
    assert!(reply.starts_with("-ERR Please specify at least one argument for this redis lib call script: "), "{reply}");
}

#[test]
fn the_sandbox_guards_globals() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let reply = eval(&scripts, "return x", &[], &[], h);
    assert!(reply.starts_with("-ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: "), "{reply}");
    let reply = eval(&scripts, "x = 1", &[], &[], h);
    assert!(reply.starts_with("-ERR user_script:1: Attempt to modify a readonly table script: "), "{reply}");
    let reply = eval(&scripts, "string.x = 1", &[], &[], h);
    assert!(reply.starts_with("-ERR user_script:1: Attempt to modify a readonly table"), "{reply}");
    for name in ["os", "io", "debug", "dofile", "loadfile", "require", "print", "setfenv", "getfenv"] {
        let reply = eval(&scripts, &format!("return {name}"), &[], &[], h);
        assert!(reply.contains(&format!("nonexistent global variable '{name}'")), "{name}: {reply}");
    }
    assert_eq!(eval(&scripts, "return bit.band(7, 3)", &[], &[], h), ":3\r\n");
    assert_eq!(eval(&scripts, "return bit.tohex(65535, -4)", &[], &[], h), "$4\r\nFFFF\r\n");
    assert_eq!(eval(&scripts, "return redis.sha1hex('')", &[], &[], h), "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n");
    assert_eq!(eval(&scripts, "return unpack({1, 2})", &[], &[], h), ":1\r\n");
    let reply = eval(&scripts, "error('boom')", &[], &[], h);
    assert!(reply.starts_with("-ERR user_script:1: boom script: "), "{reply}");
    assert!(reply.ends_with(", on @user_script:1.\r\n"), "{reply}");
    let reply = eval(&scripts, "error({err = 'X y'})", &[], &[], h);
    assert!(reply.starts_with("-X y script: "), "{reply}");
}

#[test]
fn compile_errors_name_the_line() {
    let scripts = Scripts::new(MEMORY).unwrap();
    assert_eq!(scripts.load("s", b"return ("), Err("user_script:1: unexpected symbol near '<eof>'".to_string()));
    assert_eq!(scripts.load("t", b"return 1"), Ok(1));
}

#[test]
fn redis_log_reaches_the_host() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    eval(&scripts, "redis.log(redis.LOG_WARNING, 'a', 1)", &[], &[], h);
    assert_eq!(h.logged, vec![(3, "a 1".to_string())]);
}

/// Starts `body` with a busy threshold of `busy_after`.
fn start(scripts: &Scripts, body: &str, busy_after: Duration, h: &mut Replies) -> (u32, Outcome) {
    let id = scripts.load(body, body.as_bytes()).expect("compiles");
    scripts.words_for_next_run();
    (id, scripts.start(id, 0, busy_after, h))
}

fn reply_text(scripts: &Scripts) -> String {
    String::from_utf8_lossy(&scripts.reply()[1..]).into_owned()
}

#[test]
fn a_script_past_its_threshold_stops_busy_and_goes_on_when_resumed() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let body = "local n = 0 local t = redis.call('ping') for i = 1, 3e7 do n = n + 1 end return {n, t.ok}";
    let (_, outcome) = start(&scripts, body, Duration::ZERO, h);
    assert_eq!(outcome, Outcome::Busy);
    assert!(scripts.busy());
    let mut slices = 1;
    while scripts.resume(false, h) == Outcome::Busy {
        slices += 1;
    }
    assert!(slices > 1, "30M instructions take more than one {BUSY_SLICE:?} slice");
    assert!(!scripts.busy());
    assert_eq!(reply_text(&scripts), "*2\r\n:30000000\r\n$4\r\nPONG\r\n");
    // One under its threshold runs to its end at once.
    assert_eq!(start(&scripts, "return 7", Duration::from_secs(5), h).1, Outcome::Done);
    assert_eq!(reply_text(&scripts), ":7\r\n");
}

#[test]
fn busy_reply_threshold_counts_from_the_start_of_the_scripts_command() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    // Some 200,000 instructions: the hook checks the time twice or more, in far less than a second.
    let body = "local n = 0 for i = 1, 1e5 do n = n + 1 end return n";
    // The server says the command had run 10 s before the first check: past a 5 s threshold
    // already, so the script stops at that check.
    h.ran = Duration::from_secs(10);
    assert_eq!(start(&scripts, body, Duration::from_secs(5), h).1, Outcome::Busy);
    assert_eq!(h.elapsed_asked, 1);
    while scripts.resume(false, h) == Outcome::Busy {}
    // Asked once a run: later checks compare with the deadline worked out at the first.
    assert_eq!(h.elapsed_asked, 1);
    assert_eq!(reply_text(&scripts), ":100000\r\n");
    // Had it just started, the same run ends within its threshold.
    h.ran = Duration::ZERO;
    assert_eq!(start(&scripts, body, Duration::from_secs(5), h).1, Outcome::Done);
    assert_eq!(h.elapsed_asked, 2);
    // A script too short to check the time never asks.
    assert_eq!(start(&scripts, "return 1", Duration::from_secs(5), h).1, Outcome::Done);
    assert_eq!(h.elapsed_asked, 2);
}

#[test]
fn a_killed_script_ends_with_redis_error_however_it_catches_errors() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let bodies = [
        "while true do end",
        // A pcall around the loop, a pcall around redis.call, and an xpcall whose handler loops.
        "local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end",
        "while true do pcall(redis.call, 'ping') end",
        "while true do xpcall(function() while true do end end, function() while true do end end) end",
        // Inside a Lua coroutine, a sort comparator and a gsub callback.
        "local co = coroutine.wrap(function() while true do end end) co()",
        "local t = {} for i = 1, 100 do t[i] = i end while true do table.sort(t, function(a, b) local n = 0 for i = 1, 1e6 do n = n + 1 end return a < b end) end",
        "while true do string.gsub(string.rep('a', 1000), 'a', function() for i = 1, 1e5 do end end) end",
    ];
    for body in bodies {
        let sha = body;
        let (_, outcome) = start(&scripts, body, Duration::ZERO, h);
        assert_eq!(outcome, Outcome::Busy, "{body}");
        assert_eq!(scripts.resume(true, h), Outcome::Done, "{body}");
        let reply = reply_text(&scripts);
        assert!(reply.starts_with(&format!("-ERR Script killed by user with SCRIPT KILL... script: {sha}")), "{body}: {reply}");
        // The state is usable after it, and scripts are not killed any more.
        assert_eq!(eval(&scripts, "local n = 0 for i = 1, 1e6 do n = n + 1 end return n", &[], &[], h), ":1000000\r\n");
    }
}

#[test]
fn a_killed_script_calls_no_more_commands() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let (_, outcome) = start(&scripts, "while true do redis.call('ping') end", Duration::ZERO, h);
    assert_eq!(outcome, Outcome::Busy);
    let asked = h.asked.len();
    assert_eq!(scripts.resume(true, h), Outcome::Done);
    assert_eq!(h.asked.len(), asked);
}

#[test]
fn a_state_dropped_with_a_busy_script_ends_it() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    assert_eq!(start(&scripts, "while true do pcall(redis.call, 'ping') end", Duration::ZERO, h).1, Outcome::Busy);
    drop(scripts);
}

#[test]
fn cjson_encodes_and_decodes() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let cases: &[(&str, &str)] = &[
        ("return cjson.encode({1, 2, 'a/b'})", "[1,2,\"a\\/b\"]"),
        ("return cjson.encode({})", "{}"),
        ("return cjson.encode({a = {b = true}})", "{\"a\":{\"b\":true}}"),
        ("return cjson.encode({1, nil, 3})", "[1,null,3]"),
        ("return cjson.encode(0.1)", "0.1"),
        ("return cjson.encode('\\n\\1')", "\"\\n\\u0001\""),
        ("return cjson.encode(cjson.null)", "null"),
        ("local t = cjson.decode('{\"a\":[1,2,{\"b\":\"x\\\\u00e9\"}]}') return t.a[3].b", "x\u{e9}"),
        ("return tostring(cjson.decode('[null]')[1] == cjson.null)", "true"),
        ("return cjson.encode(cjson.decode(' [1.5, \"\\\\ud83d\\\\ude00\", false] '))", "[1.5,\"\u{1F600}\",false]"),
    ];
    for (body, expected) in cases {
        let reply = eval(&scripts, body, &[], &[], h);
        assert_eq!(reply, format!("${}\r\n{expected}\r\n", expected.len()), "{body}");
    }
    let reply = eval(&scripts, "return cjson.encode({[20] = 1})", &[], &[], h);
    assert!(reply.contains("Cannot serialise table: excessively sparse array"), "{reply}");
    let reply = eval(&scripts, "return cjson.decode('[1,')", &[], &[], h);
    assert!(reply.contains("Expected value but found T_END at character 4"), "{reply}");
    let reply = eval(&scripts, "return cjson.encode(0/0)", &[], &[], h);
    assert!(reply.contains("Cannot serialise number: must not be NaN or Inf"), "{reply}");
}

#[test]
fn a_script_past_the_memory_limit_fails_alone() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let reply = eval(&scripts, "local t = {} for i = 1, 1e9 do t[i] = i end", &[], &[], h);
    assert!(reply.starts_with("-ERR not enough memory script: "), "{reply}");
    assert_eq!(eval(&scripts, "return 2", &[], &[], h), ":2\r\n");
}

#[test]
fn a_command_error_passed_on_is_marked_counted() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let run = |body: &str, h: &mut Replies| {
        let id = scripts.load(body, body.as_bytes()).unwrap();
        scripts.run(id, &[], &[], h)[0]
    };
    let counted = |body: &str, h: &mut Replies| run(body, h) & crate::run::REPLY_COUNTED != 0;
    assert!(counted("return redis.pcall('incr', 'k')", h));
    assert!(counted("return redis.call('incr', 'k')", h));
    assert!(!counted("return redis.error_reply('MY own')", h));
    assert!(!counted("return {err = 'mine'}", h));
    assert!(!counted("return 1", h));
    assert_eq!(eval(&scripts, "local e = redis.pcall('incr', 'k') return tostring(e.ignore_error_stats_update)", &[], &[], h), "$4\r\ntrue\r\n");
}

#[test]
fn plain_resp2_replies_are_marked_plain_and_no_others() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let mut plain = |body: &str| {
        let id = scripts.load(body, body.as_bytes()).unwrap();
        scripts.run(id, &[], &[], h)[0] & crate::run::REPLY_PLAIN != 0
    };
    for body in ["return 1", "return 'x'", "return nil", "return false", "return true", "return {ok = 'fine'}", "return {}", "return {1, 'a', {2, false, {ok = 'x'}}}"] {
        assert!(plain(body), "{body}");
    }
    for body in [
        "return {err = 'mine'}",
        "return {1, {err = 'nested'}}",
        "return redis.pcall('incr', 'k')",
        "return {1, redis.pcall('incr', 'k')}",
        "return {double = 1.5}",
        "return {big_number = '1'}",
        "return {verbatim_string = {format = 'txt', string = 'x'}}",
        "return {map = {a = 1}}",
        "return {1, {set = {a = true}}}",
        "redis.setresp(3) return true",
        "redis.setresp(3) return {1, false}",
        "local t = {} local n = t for i = 1, 1000 do n[1] = {} n = n[1] end return t",
    ] {
        assert!(!plain(body), "{body}");
    }
}

#[test]
fn long_arrays_are_returned_and_packed_whole() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let reply = eval(&scripts, "local t = {} for i = 1, 30000 do t[i] = 'item' .. i end return t", &[], &[], h);
    assert!(reply.starts_with("*30000\r\n$5\r\nitem1\r\n"));
    assert!(reply.ends_with("$9\r\nitem30000\r\n"));
    let reply = eval(&scripts, "local t = {} for i = 1, 30000 do t[i] = 'v' .. i end return {cmsgpack.unpack(cmsgpack.pack(t))}", &[], &[], h);
    assert!(reply.starts_with("*1\r\n*30000\r\n$2\r\nv1\r\n"), "{}", &reply[..40]);
}

#[test]
fn libraries_register_functions_that_run_with_keys_and_arguments() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let code = b"--lua name=lib\nredis.register_function('f', function(keys, args) return {keys[1], args[1], redis.call('get', keys[1])} end)\n\
        redis.register_function{function_name='g', callback=function() error('oops') end, flags={'no-writes'}, description='d'}";
    let registered = scripts.load_library(code, h).unwrap();
    assert_eq!(registered.iter().map(|r| (r.name.as_str(), r.flags.clone(), r.description.clone())).collect::<Vec<_>>(), vec![
        ("f", vec![], None),
        ("g", vec!["no-writes".to_string()], Some("d".to_string())),
    ]);
    let reply = scripts.run(registered[0].id, &[b"k"], &[b"a"], h);
    assert_eq!(String::from_utf8_lossy(&reply[1..]), "*3\r\n$1\r\nk\r\n$1\r\na\r\n$3\r\nabc\r\n");
    let reply = scripts.run(registered[1].id, &[], &[], h);
    assert_eq!(String::from_utf8_lossy(&reply[1..]), "-ERR user_function:3: oops script: g, on @user_function:3.\r\n");
    let errors: &[(&[u8], &str)] = &[
        (b"--lua name=x\nreturn 1", "No functions registered"),
        (b"--lua name=x\nreturn (", "Error compiling function: user_function:2: unexpected symbol near '<eof>'"),
        (b"--lua name=x\nredis.call('ping')", "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"),
        (b"--lua name=x\nredis.register_function('a b', function() end)", "Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        (b"--lua name=x\nredis.register_function('a', 5)", "Error registering functions: ERR second argument to redis.register_function must be a function"),
        (b"--lua name=x\nredis.register_function('a', function() end) redis.register_function('a', function() end)", "Error registering functions: ERR Function already exists in the library"),
        (b"--lua name=x\nwhile true do end", "Error registering functions: ERR FUNCTION LOAD timeout"),
    ];
    let logging = b"--lua name=y\nredis.log(redis.LOG_WARNING, 'loading y')\nredis.register_function('y', function() return 1 end)";
    assert!(scripts.load_library(logging, h).is_ok());
    assert_eq!(h.logged.last(), Some(&(3, "loading y".to_string())));
    for (code, expected) in errors {
        assert_eq!(scripts.load_library(code, h).err().as_deref(), Some(*expected));
    }
}

#[test]
fn library_arguments_at_their_limits_are_errors_not_crashes() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    // unpack's count taken in 32 bits overflowed and pushed 2^31 values (CVE-2025-46817).
    let reply = eval(&scripts, "return {unpack({1, 2, 3}, -2, 2147483647)}", &[], &[], h);
    assert!(reply.starts_with("-ERR user_script:1: too many results to unpack script: "), "{reply}");
    assert!(eval(&scripts, "return {unpack({}, -2147483648, 2147483647)}", &[], &[], h).contains("too many results to unpack"));
    assert_eq!(eval(&scripts, "return {unpack({1, 2, 3}, -2, 2)}", &[], &[], h), "*0\r\n");
    assert_eq!(eval(&scripts, "return {unpack({1, 2, 3}, 2)}", &[], &[], h), "*2\r\n:2\r\n:3\r\n");
    assert_eq!(eval(&scripts, "return select('#', unpack({}, 1, 7000))", &[], &[], h), ":7000\r\n");
    assert!(eval(&scripts, "return unpack({}, 1, 8000)", &[], &[], h).contains("too many results to unpack"));
    // One recursion of the matcher per quantified item: 300,000 overflowed the C stack.
    for call in ["string.find(s, p)", "string.match(s, p)", "string.gsub(s, p, '')", "s:gmatch(p)()"] {
        let body = format!("local s, p = string.rep('a', 300000), string.rep('a?', 300000) return {call}");
        let reply = eval(&scripts, &body, &[], &[], h);
        assert!(reply.starts_with("-ERR user_script:1: pattern too complex script: "), "{call}: {reply}");
    }
    let at_limit = format!("return {{string.find(string.rep('a', 200), string.rep('a?', {}))}}", super::limits::PATTERN_ITEMS_MAX);
    assert_eq!(eval(&scripts, &at_limit, &[], &[], h), "*2\r\n:1\r\n:200\r\n");
    assert_eq!(eval(&scripts, "return {string.find(string.rep('*', 500), string.rep('*', 300), 1, true)}", &[], &[], h), "*2\r\n:1\r\n:300\r\n");
    // table.insert shifted down to the position one slot at a time, in C.
    let reply = eval(&scripts, "table.insert({}, -2^31, 1)", &[], &[], h);
    assert!(reply.starts_with("-ERR user_script:1: bad argument #2 to 'insert' (position out of bounds) script: "), "{reply}");
    assert_eq!(eval(&scripts, "local t = {1} table.insert(t, -999999, 0) return {t[-999999], tostring(t[1]), t[2]}", &[], &[], h), "*3\r\n:0\r\n$3\r\nnil\r\n:1\r\n");
    assert!(eval(&scripts, "table.insert({}, -1000000, 0)", &[], &[], h).contains("position out of bounds"));
}

#[test]
fn bytecode_is_parsed_as_text_everywhere() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    // Made by this state itself; as a script, a library or a loaded chunk it is a syntax error.
    let id = scripts.load("dump", b"return string.dump(loadstring('return 42'))").unwrap();
    let dump = scripts.run(id, &[], &[], h);
    let at = dump.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    let bytecode = dump[at..dump.len() - 2].to_vec();
    assert_eq!(bytecode[0], 0x1b);
    assert_eq!(scripts.load("bytecode", &bytecode), Err("user_script:1: unexpected symbol near 'char(27)'".to_string()));
    let mut library = b"--lua name=x\n".to_vec();
    library.extend_from_slice(&bytecode);
    assert!(scripts.load_library(&library, h).err().unwrap().contains("unexpected symbol near 'char(27)'"));
    let chunk = "local f, e = loadstring(string.dump(function() return 1 end)) return {type(f), e}";
    assert_eq!(eval(&scripts, chunk, &[], &[], h), "*2\r\n$3\r\nnil\r\n$53\r\n[string \"\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'\r\n");
    let pieces = "local n = 0 local f, e = load(function() n = n + 1 if n == 1 then return string.dump(function() end) end end) return {type(f), e}";
    assert_eq!(eval(&scripts, pieces, &[], &[], h), "*2\r\n$3\r\nnil\r\n$43\r\n(load):1: unexpected symbol near 'char(27)'\r\n");
    assert_eq!(eval(&scripts, "local p, i = {'return ', '4', '2'}, 0 return load(function() i = i + 1 return p[i] end)()", &[], &[], h), ":42\r\n");
}

#[test]
fn no_script_changes_what_the_next_one_sees() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let readonly = ": Attempt to modify a readonly table script: ";
    for write in [
        "rawset(_G, 'tostring', function() return 'pwn' end)", "rawset(string, 'upper', function() return 'pwn' end)",
        "table.insert(_G, 1)", "table.insert(string, 1)", "setmetatable(_G, nil)", "setmetatable(string, {})",
        "getmetatable('').__index = {}", "getmetatable('').__index.upper = function() return 'pwn' end",
        "getmetatable('').__metatable = 1", "getmetatable(_G).__index = nil", "loadstring('tostring = 1')()",
        "load(function() return nil end)", "rawset(redis, 'call', 1)",
    ] {
        let reply = eval(&scripts, write, &[], &[], h);
        assert!(reply.is_empty() || reply.contains("Attempt to modify a readonly table") || reply == "$-1\r\n", "{write}: {reply}");
    }
    assert!(eval(&scripts, "rawset(_G, 'x', 1)", &[], &[], h).starts_with(&format!("-ERR Attempt to modify a readonly table script: ")));
    assert!(eval(&scripts, "getmetatable('').x = 1", &[], &[], h).contains(&format!("user_script:1{readonly}")));
    let probe = "return {('x'):upper(), string.upper('y'), tostring(1), type(redis.call), tostring(getmetatable('').__index == string), \
                 tostring(rawget(_G, 'x')), tostring(rawget(string, 1)), tostring(getmetatable(string))}";
    assert_eq!(eval(&scripts, probe, &[], &[], h), "*8\r\n$1\r\nX\r\n$1\r\nY\r\n$1\r\n1\r\n$8\r\nfunction\r\n$4\r\ntrue\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n");
    // A loaded chunk runs in the script's globals: read-only, KEYS and ARGV there.
    assert_eq!(eval(&scripts, "return loadstring('return KEYS[1]')()", &["k"], &[], h), "$1\r\nk\r\n");
    assert!(eval(&scripts, "loadstring('x = 1')()", &[], &[], h).starts_with("-ERR [string \"x = 1\"]:1: Attempt to modify a readonly table script: "));
}

#[test]
fn a_stopped_collector_is_restarted_after_the_run_that_stopped_it() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    eval(&scripts, "collectgarbage('stop')", &[], &[], h);
    let garbage = "for i = 1, 2000 do local t = {i, tostring(i)} end return collectgarbage('count')";
    let grown: Vec<i64> = (0..20).map(|_| eval(&scripts, garbage, &[], &[], h)[1..].trim_end().parse().unwrap()).collect();
    // Were it still stopped, memory would only grow; restarted, it falls back.
    assert!(grown.windows(2).any(|w| w[1] < w[0]), "{grown:?}");
    // Stopped and left so within one run, too: the next runs find it running.
    eval(&scripts, "collectgarbage('stop') for i = 1, 2000 do local t = {i} end", &[], &[], h);
    let after: Vec<i64> = (0..20).map(|_| eval(&scripts, garbage, &[], &[], h)[1..].trim_end().parse().unwrap()).collect();
    assert!(after.windows(2).any(|w| w[1] < w[0]), "{after:?}");
}

/// What the guards cost a hot loop: table.insert, rawset and getmetatable through readonly.rs's
/// C functions against Lua's own (a state without the sandbox). `cargo test --release -p
/// svc-script guard_cost -- --ignored --nocapture`.
#[test]
#[ignore]
fn guard_cost() {
    let bodies = [
        // Each function read once into a local, so that only the call is timed (a global read in
        // the sandbox passes through two proxies).
        ("table.insert", "local insert, n = table.insert, 0 for j = 1, 30 do local t = {} for i = 1, 100000 do insert(t, i) end n = n + #t end return n"),
        ("rawset", "local rawset, n = rawset, 0 for j = 1, 30 do local t = {} for i = 1, 100000 do rawset(t, i, i) end n = n + #t end return n"),
        ("getmetatable", "local getmetatable, t, n = getmetatable, setmetatable({}, {}), 0 for i = 1, 3000000 do if getmetatable(t) then n = n + 1 end end return n"),
        ("string.find", "local find, n = string.find, 0 for i = 1, 3000000 do if find('hello world', 'o w') then n = n + 1 end end return n"),
        ("unpack", "local unpack, select, t, n = unpack, select, {1, 2, 3}, 0 for i = 1, 3000000 do n = n + select('#', unpack(t)) end return n"),
    ];
    let scripts = Scripts::new(MEMORY).unwrap();
    let plain = mlua::Lua::new();
    let h = &mut host();
    for (name, body) in bodies {
        let best = |f: &mut dyn FnMut()| (0..5).map(|_| { let t = std::time::Instant::now(); f(); t.elapsed() }).min().unwrap();
        let id = scripts.load(name, body.as_bytes()).unwrap();
        let mut reply = Vec::new();
        let guarded = best(&mut || reply = scripts.run(id, &[], &[], h));
        let function = plain.load(body).into_function().unwrap();
        let mut value = 0.0;
        let own = best(&mut || value = function.call::<f64>(()).unwrap());
        assert_eq!(String::from_utf8_lossy(&reply[1..]), format!(":{value}\r\n"), "{name}");
        println!("{name}: guarded {guarded:?}, Lua's own {own:?}");
    }
}

#[test]
fn garbage_left_by_one_script_does_not_fail_the_next() {
    // A quarter of this limit is the most a run leaves uncollected.
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    let hoard = "collectgarbage('stop') local t = {} for i = 1, 10 do t[i] = string.rep('x', 2^22) .. i end return 1";
    assert_eq!(eval(&scripts, hoard, &[], &[], h), ":1\r\n");
    // 40 MiB of garbage, and the collector stopped: without a collection in between, 16 MiB more
    // would pass the 64 MiB limit.
    assert_eq!(eval(&scripts, "return #string.rep('y', 2^24)", &[], &[], h), ":16777216\r\n");
    let pause = "collectgarbage('setpause', 1e9) local t = {} for i = 1, 10 do t[i] = string.rep('x', 2^22) .. i end return 1";
    assert_eq!(eval(&scripts, pause, &[], &[], h), ":1\r\n");
    assert_eq!(eval(&scripts, "return #string.rep('y', 2^24)", &[], &[], h), ":16777216\r\n");
}

/// Records, for each word of each command, the run's word it is (super::run_word), if any.
struct Referring {
    found: Vec<Vec<Option<u32>>>,
}

impl Host for Referring {
    fn call(&mut self, args: &[&[u8]]) -> &[u8] {
        self.found.push(args.iter().map(|a| super::run_word(a)).collect());
        b"+OK\r\n"
    }
    fn log(&mut self, _: u8, _: &[u8]) {}
}

#[test]
fn a_command_naming_a_word_the_script_was_given_refers_to_it() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut Referring { found: Vec::new() };
    let body = "redis.call('set', KEYS[1], ARGV[1], 'k' .. '1', KEYS[2] .. 'z', 5, 'b') \
                KEYS[1] = 'changed' redis.call('set', KEYS[1], 'k1') return 1";
    let sha = sha1_smol::Sha1::from(body).digest().to_string();
    let id = scripts.load(&sha, body.as_bytes()).unwrap();
    scripts.run(id, &[b"k1", b"k2"], &[b"a", b"b"], h);
    // A string equal to a given word is that word (Lua interns strings); a number, a new string,
    // and the command's name are not. Word numbers count the keys, then the arguments.
    assert_eq!(h.found[0], vec![None, Some(0), Some(2), Some(0), None, None, Some(3)]);
    // A key the script replaced is not the word any more; the word itself still is.
    assert_eq!(h.found[1], vec![None, None, Some(0)]);
    // Outside a run nothing is.
    assert_eq!(super::run_word(b"k1"), None);
}

#[test]
fn each_run_sees_only_its_own_keys_and_arguments() {
    let scripts = Scripts::new(MEMORY).unwrap();
    let h = &mut host();
    // What a run may do to the KEYS and ARGV tables it was given (run.rs's refill_words keeps
    // the two tables from run to run): add to them, take from them, give them a metatable.
    let meddle = "KEYS[5] = 'x'; KEYS.extra = 1; ARGV[1] = nil; table.insert(ARGV, 'y'); \
                  setmetatable(KEYS, { __index = function() return 'from a metatable' end }); return 1";
    let show = "local parts = {} \
                for k, v in pairs(KEYS) do parts[#parts + 1] = 'K' .. tostring(k) .. '=' .. v end \
                for k, v in pairs(ARGV) do parts[#parts + 1] = 'A' .. tostring(k) .. '=' .. v end \
                table.sort(parts) \
                return table.concat(parts, ' ') .. ' #' .. #KEYS .. '/' .. #ARGV .. ' ' .. tostring(getmetatable(KEYS)) .. ' ' .. tostring(KEYS[9])";
    assert_eq!(eval(&scripts, meddle, &["a", "b"], &["c", "d", "e"], h), ":1\r\n");
    let bulk = |text: &str| format!("${}\r\n{text}\r\n", text.len());
    assert_eq!(eval(&scripts, show, &["k1"], &["v1", "v2"], h), bulk("A1=v1 A2=v2 K1=k1 #1/2 nil nil"));
    // No words at all, then as many as the kept tables hold, one past it, and few again.
    assert_eq!(eval(&scripts, show, &[], &[], h), bulk(" #0/0 nil nil"));
    for count in [64, 65, 3] {
        let words: Vec<String> = (1..=count).map(|i| format!("w{i}")).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        assert_eq!(eval(&scripts, meddle, &words, &words, h), ":1\r\n");
        let summary = format!("return #KEYS .. '/' .. #ARGV .. ' ' .. KEYS[{count}] .. ' ' .. tostring(KEYS[{}]) .. ' ' .. ARGV[{count}]", count + 1);
        let expected = format!("w{count} nil w{count}");
        let reply = eval(&scripts, &summary, &words, &words, h);
        assert!(reply.ends_with(&format!("{count}/{count} {expected}\r\n")), "{count} words: {reply}");
    }
}
