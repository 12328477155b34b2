//! `client-output-buffer-limit`: the directive's setter (Redis's error texts) and the limits of
//! its three client classes, parsed once for the writers to check.

use super::{parse_memory, Config};

pub(super) fn set_output_limit(c: &mut Config, args: &[String]) -> Result<(), String> {
    let parts: Vec<String> = args
        .join(" ")
        .split_whitespace()
        .map(String::from)
        .collect();
    if parts.is_empty() || !parts.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut current: Vec<(String, String)> = c
        .client_output_buffer_limit
        .split_whitespace()
        .collect::<Vec<_>>()
        .chunks(4)
        .map(|ch| (ch[0].to_string(), ch[1..].join(" ")))
        .collect();
    for ch in parts.chunks(4) {
        let class = match ch[0].to_ascii_lowercase().as_str() {
            "normal" => "normal",
            "slave" | "replica" => "slave",
            "pubsub" => "pubsub",
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        };
        let hard = parse_memory(&ch[1]);
        let soft = parse_memory(&ch[2]);
        let secs = ch[3].parse::<i64>().ok().filter(|&s| s >= 0);
        let (Some(hard), Some(soft), Some(secs)) = (hard, soft, secs) else {
            return Err(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.".into(),
            );
        };
        let entry = current
            .iter_mut()
            .find(|(k, _)| k == class)
            .expect("all classes listed");
        entry.1 = format!("{hard} {soft} {secs}");
    }
    c.client_output_buffer_limit = current
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(" ");
    c.obuf_limits = ObufLimits::parse(&c.client_output_buffer_limit);
    Ok(())
}

/// One class of `client-output-buffer-limit`, in bytes and seconds (0 = no limit).
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub struct ObufLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_secs: u64,
}

/// The three classes of `client-output-buffer-limit`.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub struct ObufLimits {
    pub normal: ObufLimit,
    pub replica: ObufLimit,
    pub pubsub: ObufLimit,
}

impl ObufLimits {
    /// Parses the directive's canonical value (`normal h s t slave h s t pubsub h s t`, as its
    /// setter writes it).
    pub fn parse(conf: &str) -> ObufLimits {
        let mut limits = ObufLimits::default();
        let words: Vec<&str> = conf.split_whitespace().collect();
        for ch in words.chunks(4).filter(|ch| ch.len() == 4) {
            let num = |s: &str| parse_memory(s).unwrap_or(0).max(0) as u64;
            let limit = ObufLimit {
                hard: num(ch[1]),
                soft: num(ch[2]),
                soft_secs: ch[3].parse().unwrap_or(0),
            };
            match ch[0].to_ascii_lowercase().as_str() {
                "normal" => limits.normal = limit,
                "slave" | "replica" => limits.replica = limit,
                "pubsub" => limits.pubsub = limit,
                _ => {}
            }
        }
        limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_buffer_limits_follow_their_directive() {
        let mut c = Config::default();
        assert_eq!(
            c.obuf_limits,
            ObufLimits::parse(&c.client_output_buffer_limit)
        );
        set_output_limit(&mut c, &["normal 1mb 512kb 10 replica 1gb 0 0".into()]).unwrap();
        let mb = 1024 * 1024;
        assert_eq!(
            c.obuf_limits.normal,
            ObufLimit {
                hard: mb,
                soft: 512 * 1024,
                soft_secs: 10
            }
        );
        assert_eq!(c.obuf_limits.replica.hard, 1024 * mb);
        assert_eq!(c.obuf_limits.pubsub.hard, 32 * mb);
    }
}
