//! Redis's glob-style pattern matching (`stringmatchlen` in Redis's util.c), used by KEYS, SCAN MATCH,
//! CONFIG GET and (later) PSUBSCRIBE. Same semantics byte for byte: `*`, `?`, `[...]` with `^`
//! negation, ranges (reversed ranges allowed) and `\` escapes, an unterminated `[` taken literally, and
//! C's signed-char comparisons in ranges. The same guards against abusive patterns: a nesting cap
//! and the early exit once a `*` has failed to match anywhere in the rest of the string.

pub fn matches(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    let mut skip_longer = false;
    match_impl(pattern, string, nocase, &mut skip_longer, 0)
}

fn lower(c: u8) -> i32 {
    c.to_ascii_lowercase() as i8 as i32
}

fn same(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

fn match_impl(pat: &[u8], s: &[u8], nocase: bool, skip_longer: &mut bool, nesting: u32) -> bool {
    if nesting > 1000 {
        return false;
    }
    let (mut p, mut si) = (0usize, 0usize);
    while p < pat.len() && si < s.len() {
        match pat[p] {
            b'*' => {
                while p + 1 < pat.len() && pat[p + 1] == b'*' {
                    p += 1;
                }
                if p + 1 == pat.len() {
                    return true;
                }
                while si < s.len() {
                    if match_impl(&pat[p + 1..], &s[si..], nocase, skip_longer, nesting + 1) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    si += 1;
                }
                *skip_longer = true;
                return false;
            }
            b'?' => si += 1,
            b'[' => {
                p += 1;
                let not = p < pat.len() && pat[p] == b'^';
                if not {
                    p += 1;
                }
                let mut hit = false;
                loop {
                    if p >= pat.len() {
                        // Unterminated class: step back so the increment below lands on the end.
                        p -= 1;
                        break;
                    } else if pat[p] == b'\\' && pat.len() - p >= 2 {
                        p += 1;
                        if pat[p] == s[si] {
                            hit = true;
                        }
                    } else if pat[p] == b']' {
                        break;
                    } else if pat.len() - p >= 3 && pat[p + 1] == b'-' {
                        let (mut start, mut end) = (pat[p] as i8 as i32, pat[p + 2] as i8 as i32);
                        let mut c = s[si] as i8 as i32;
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        if nocase {
                            start = lower(start as u8);
                            end = lower(end as u8);
                            c = lower(c as u8);
                        }
                        p += 2;
                        if c >= start && c <= end {
                            hit = true;
                        }
                    } else if same(pat[p], s[si], nocase) {
                        hit = true;
                    }
                    p += 1;
                }
                if not {
                    hit = !hit;
                }
                if !hit {
                    return false;
                }
                si += 1;
            }
            c => {
                let lit = if c == b'\\' && pat.len() - p >= 2 {
                    p += 1;
                    pat[p]
                } else {
                    c
                };
                if !same(lit, s[si], nocase) {
                    return false;
                }
                si += 1;
            }
        }
        p += 1;
        if si == s.len() {
            while p < pat.len() && pat[p] == b'*' {
                p += 1;
            }
            break;
        }
    }
    p == pat.len() && si == s.len()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn redis_glob_cases() {
        assert!(matches(b"*", b"anything", false));
        assert!(matches(b"h?llo", b"hello", false));
        assert!(matches(b"h*llo", b"heeeello", false));
        assert!(matches(b"h[ae]llo", b"hallo", false));
        assert!(!matches(b"h[^e]llo", b"hello", false));
        assert!(matches(b"h[a-b]llo", b"hbllo", false));
        assert!(matches(b"h[b-a]llo", b"hallo", false));
        assert!(matches(b"h\\*llo", b"h*llo", false));
        assert!(!matches(b"h\\*llo", b"hello", false));
        assert!(matches(b"HELLO", b"hello", true));
        assert!(!matches(b"a*", b"", false));
        // As in Redis, the function itself never matches an empty string; KEYS and SCAN special-case
        // the lone `*` pattern before calling it.
        assert!(!matches(b"*", b"", false));
        assert!(!matches(b"a[", b"a[", false));
        assert!(!matches(
            b"a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z*!",
            &[b'a'; 5000],
            false
        ));
    }
}
