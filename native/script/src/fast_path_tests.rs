//! What the tests of the fast paths (cmsgpack_stack.rs, cjson_stack.rs) share: a deterministic
//! generator of inputs, and a Lua function that writes down what a call answers, so that a fast
//! path and the general function it stands in for can be compared call by call.

/// A small deterministic generator (xorshift64*), so a failure repeats.
pub struct Random(pub u64);

impl Random {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len() as u64) as usize]
    }

    /// `bytes` now and then cut short, with a byte changed, or with `extra` appended.
    pub fn damage(&mut self, bytes: &mut Vec<u8>, extra: u8) {
        match self.below(8) {
            0 if !bytes.is_empty() => bytes.truncate(self.below(bytes.len() as u64) as usize),
            1 if !bytes.is_empty() => {
                let at = self.below(bytes.len() as u64) as usize;
                bytes[at] = self.next() as u8;
            }
            2 => bytes.push(extra),
            _ => {}
        }
    }
}

/// Lua source of a function `outcome(f, ...)`: what `pcall(f, ...)` gives, written down —
/// whether it succeeded, then each value or the error; numbers at full precision; tables by their
/// length and their pairs, sorted (a table as a key is placed by its address, which differs from
/// run to run); the chunk's argument, if any, by the name `null` (cjson.null).
pub const OUTCOME: &str = r#"
    local null = ...
    local function dump(v)
      if null ~= nil and v == null then return 'null' end
      if type(v) == 'number' then return string.format('%.17g', v) end
      if type(v) ~= 'table' then return type(v) .. ':' .. tostring(v) end
      local parts = {}
      for k, x in pairs(v) do parts[#parts + 1] = dump(k) .. '=' .. dump(x) end
      table.sort(parts)
      return '{#' .. #v .. ',' .. table.concat(parts, ',') .. '}'
    end
    local function collect(...)
      local out = {tostring(select('#', ...))}
      for i = 1, select('#', ...) do out[#out + 1] = dump((select(i, ...))) end
      return table.concat(out, '|')
    end
    return function(f, ...) return collect(pcall(f, ...)) end
"#;
