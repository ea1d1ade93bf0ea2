//! Numbers as C's `%.<digits>g` writes them: what Redis writes when a script passes a number to a
//! command (`%.17g`: 1/3 → "0.33333333333333331", 100 → "100", 1e20 → "1e+20"), and what cjson
//! writes in JSON (`%.14g`).

/// `n` as C's `printf("%.17g", n)` writes it.
pub fn format_g17(n: f64) -> String {
    format_g(n, 17)
}

/// `n` as C's `printf("%.<digits>g", n)` writes it; `digits` is 1 to 17.
pub fn format_g(n: f64, digits: i32) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if n == 0.0 {
        return if n.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // An integer of at most as many digits as asked for is written whole by %g (its exponent is
    // below the precision): the common case, and the exact formatting below is slow.
    if n.trunc() == n && n.abs() < 1e15 && n.abs() < 10f64.powi(digits) {
        return format!("{}", n as i64);
    }
    // Rust's `{:e}` with digits - 1 decimals rounds to that many significant digits as printf does.
    let scientific = format!("{:.*e}", (digits - 1) as usize, n);
    let (mantissa, exponent) = scientific.split_once('e').expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    if exponent < -4 || exponent >= digits {
        let mantissa = trim_fraction(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    let decimals = (digits - 1 - exponent) as usize;
    trim_fraction(&format!("{:.*}", decimals, n)).to_string()
}

/// Drops the trailing zeros of a fraction, and its point if nothing is left after it (%g's rule).
fn trim_fraction(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::{format_g, format_g17};

    #[test]
    fn fourteen_digits() {
        assert_eq!(format_g(0.1, 14), "0.1");
        assert_eq!(format_g(1.0 / 3.0, 14), "0.33333333333333");
        assert_eq!(format_g(1e15, 14), "1e+15");
        assert_eq!(format_g(123.0, 14), "123");
        // An integer is written whole up to the precision's digits, and in exponent form past it
        // (printf's %.14g, %.3g).
        assert_eq!(format_g(99999999999999.0, 14), "99999999999999");
        assert_eq!(format_g(-12345678901234.0, 14), "-12345678901234");
        assert_eq!(format_g(100000000000000.0, 14), "1e+14");
        assert_eq!(format_g(123456789012345.0, 14), "1.2345678901234e+14");
        assert_eq!(format_g(123.0, 3), "123");
        assert_eq!(format_g(1234.0, 3), "1.23e+03");
    }

    #[test]
    fn matches_printf() {
        // Expected strings are what glibc's printf("%.17g") writes.
        let cases: &[(f64, &str)] = &[
            (100.0, "100"),
            (1.0 / 3.0, "0.33333333333333331"),
            (1e20, "1e+20"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (0.1, "0.10000000000000001"),
            (1e-5, "1.0000000000000001e-05"),
            (0.0001, "0.0001"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (12345678901234567.0, "12345678901234568"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
        ];
        for &(n, expected) in cases {
            assert_eq!(format_g17(n), expected, "{n}");
        }
    }
}
