//! What `rshmemrun --hosts` / `--hostfile` needs besides processes: the host list, which ranks
//! run where, and the start-up record the head launcher sends each per-host launcher on its
//! standard input (never argv: /proc/PID/cmdline is readable by every user).

use std::ops::Range;

/// One host of a job and how many PEs it may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub slots: usize,
}

fn parse_entry(entry: &str, origin: &str) -> Result<Host, String> {
    let (name, slots) = match entry.rsplit_once(':') {
        // An IPv6 address without brackets has colons but no slot count.
        Some((n, s)) if !n.contains(':') || n.ends_with(']') => (n, Some(s)),
        _ => (entry, None),
    };
    let name = name.trim();
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == ',' || c.is_control()) {
        return Err(format!("{origin}: {entry:?} is not a host name (expected host or host:slots)"));
    }
    let slots = match slots {
        None => 1,
        Some(s) => {
            s.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("{origin}: {entry:?}: slots must be a positive number"))?
        }
    };
    Ok(Host { name: name.to_string(), slots })
}

/// `a:4,b:4` (a host without `:slots` has one slot).
pub fn parse_list(list: &str) -> Result<Vec<Host>, String> {
    let hosts: Vec<Host> =
        list.split(',').filter(|e| !e.trim().is_empty()).map(|e| parse_entry(e.trim(), "--hosts")).collect::<Result<_, _>>()?;
    if hosts.is_empty() {
        return Err("--hosts: no host given (expected e.g. --hosts a:4,b:4)".into());
    }
    Ok(hosts)
}

/// A host file: one `host[:slots]` per line; `#` starts a comment; blank lines are skipped.
pub fn parse_file(text: &str, path: &str) -> Result<Vec<Host>, String> {
    let mut hosts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if !line.is_empty() {
            hosts.push(parse_entry(line, &format!("{path}:{}", i + 1))?);
        }
    }
    if hosts.is_empty() {
        return Err(format!("{path}: no host in the file (one host[:slots] per line)"));
    }
    Ok(hosts)
}

/// Ranks per host, filling each host's slots in order. `npes` None: one PE per slot.
pub fn place(hosts: &[Host], npes: Option<usize>) -> Result<Vec<(String, Range<usize>)>, String> {
    let slots: usize = hosts.iter().map(|h| h.slots).sum();
    let n = npes.unwrap_or(slots);
    if n > slots {
        return Err(format!(
            "-n {n}: the hosts given have only {slots} slot(s) ({}); give more hosts or slots (host:slots)",
            hosts.iter().map(|h| format!("{}:{}", h.name, h.slots)).collect::<Vec<_>>().join(",")
        ));
    }
    let mut out = Vec::new();
    let mut next = 0;
    for h in hosts {
        let take = h.slots.min(n - next);
        if take > 0 {
            out.push((h.name.clone(), next..next + take));
            next += take;
        }
    }
    Ok(out)
}

/// A word as a POSIX shell reads it back: unchanged when it is plain, else single-quoted.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What a per-host launcher needs, sent on its standard input as `key value` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub host: String,
    pub secret_hex: String,
    /// The job's star (`tcp:ADDR:PORT`).
    pub star: String,
    /// The head launcher's control socket (`tcp:ADDR:PORT`).
    pub control: String,
    pub npes: usize,
    pub ranks: Range<usize>,
    pub cwd: String,
    /// Settings the PEs get (RSHMEM_/SHMEM_/NVSHMEM_ and the library path).
    pub env: Vec<(String, String)>,
}

pub const ASSIGNMENT_MAGIC: &str = "rshmemrun-per-host 1";
/// Longest start-up record a per-host launcher reads.
pub const MAX_ASSIGNMENT: usize = 1 << 20;

impl Assignment {
    pub fn encode(&self) -> String {
        let hex = |s: &str| super::auth::to_hex_bytes(s.as_bytes());
        let mut t = format!(
            "{ASSIGNMENT_MAGIC}\nhost {}\nsecret {}\nstar {}\ncontrol {}\nnpes {}\nranks {} {}\ncwd {}\n",
            hex(&self.host),
            self.secret_hex,
            self.star,
            self.control,
            self.npes,
            self.ranks.start,
            self.ranks.end,
            hex(&self.cwd)
        );
        for (k, v) in &self.env {
            t.push_str(&format!("env {} {}\n", hex(k), hex(v)));
        }
        t.push_str("end\n");
        t
    }

    pub fn decode(text: &str) -> Result<Assignment, String> {
        let mut lines = text.lines();
        if lines.next() != Some(ASSIGNMENT_MAGIC) {
            return Err(format!("the start-up record on standard input does not begin with {ASSIGNMENT_MAGIC:?} (rshmemrun --per-host is started by rshmemrun --hosts, of the same version)"));
        }
        let unhex = |s: &str| super::auth::from_hex_bytes(s).and_then(|b| String::from_utf8(b).ok());
        let mut a = Assignment {
            host: String::new(),
            secret_hex: String::new(),
            star: String::new(),
            control: String::new(),
            npes: 0,
            ranks: 0..0,
            cwd: String::new(),
            env: Vec::new(),
        };
        let mut ended = false;
        for line in lines {
            let bad = || format!("malformed start-up line {line:?}");
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "host" => a.host = unhex(rest).ok_or_else(bad)?,
                "secret" => a.secret_hex = rest.to_string(),
                "star" => a.star = rest.to_string(),
                "control" => a.control = rest.to_string(),
                "npes" => a.npes = rest.parse().map_err(|_| bad())?,
                "ranks" => {
                    let (s, e) = rest.split_once(' ').ok_or_else(bad)?;
                    a.ranks = s.parse().map_err(|_| bad())?..e.parse().map_err(|_| bad())?;
                }
                "cwd" => a.cwd = unhex(rest).ok_or_else(bad)?,
                "env" => {
                    let (k, v) = rest.split_once(' ').ok_or_else(bad)?;
                    a.env.push((unhex(k).ok_or_else(bad)?, unhex(v).ok_or_else(bad)?));
                }
                "end" => {
                    ended = true;
                    break;
                }
                _ => return Err(bad()),
            }
        }
        if !ended || a.npes == 0 || a.ranks.is_empty() || a.ranks.end > a.npes || a.star.is_empty() || a.control.is_empty() {
            return Err("the start-up record on standard input is incomplete".into());
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: usize) -> Host {
        Host { name: name.into(), slots }
    }

    #[test]
    fn host_lists_take_slots_and_default_to_one() {
        assert_eq!(parse_list("a:4,b:4").unwrap(), vec![h("a", 4), h("b", 4)]);
        assert_eq!(parse_list("node1, node2:2,").unwrap(), vec![h("node1", 1), h("node2", 2)]);
        assert_eq!(parse_list("[2001:db8::1]:3,2001:db8::2").unwrap(), vec![h("[2001:db8::1]", 3), h("2001:db8::2", 1)]);
        let e = parse_list("a:0").unwrap_err();
        assert!(e.contains("--hosts: \"a:0\": slots must be a positive number"), "{e}");
        assert!(parse_list("a:x").is_err());
        assert!(parse_list(",").unwrap_err().contains("no host given"));
    }

    #[test]
    fn host_files_skip_comments_and_name_the_bad_line() {
        let text = "# the cluster\nnode1:4   # big one\n\n  node2\nnode3:2\n";
        assert_eq!(parse_file(text, "hf").unwrap(), vec![h("node1", 4), h("node2", 1), h("node3", 2)]);
        let e = parse_file("node1:4\nnode 2:3\n", "hf").unwrap_err();
        assert!(e.starts_with("hf:2: "), "{e}");
        let e = parse_file("# nothing\n", "hf").unwrap_err();
        assert!(e.contains("no host in the file"), "{e}");
    }

    #[test]
    fn ranks_fill_hosts_in_order() {
        let hosts = [h("a", 4), h("b", 4)];
        assert_eq!(place(&hosts, Some(8)).unwrap(), vec![("a".into(), 0..4), ("b".into(), 4..8)]);
        assert_eq!(place(&hosts, Some(3)).unwrap(), vec![("a".into(), 0..3)]);
        assert_eq!(place(&hosts, None).unwrap().len(), 2);
        let e = place(&hosts, Some(9)).unwrap_err();
        assert!(e.contains("-n 9: the hosts given have only 8 slot(s) (a:4,b:4)"), "{e}");
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("/usr/bin/prog"), "/usr/bin/prog");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn assignments_round_trip_and_refuse_garbage() {
        let a = Assignment {
            host: "rshmem-h2".into(),
            secret_hex: "ab".repeat(32),
            star: "tcp:10.77.0.1:5000".into(),
            control: "tcp:10.77.0.1:5001".into(),
            npes: 8,
            ranks: 4..8,
            cwd: "/tmp/with space".into(),
            env: vec![("RSHMEM_DEBUG".into(), "INFO\nx y".into())],
        };
        assert_eq!(Assignment::decode(&a.encode()).unwrap(), a);
        assert!(Assignment::decode("hello\n").unwrap_err().contains("does not begin with"));
        let cut = a.encode().replace("end\n", "");
        assert!(Assignment::decode(&cut).unwrap_err().contains("incomplete"));
        let e = Assignment::decode(&a.encode().replace("npes 8", "npes x")).unwrap_err();
        assert!(e.contains("malformed start-up line \"npes x\""), "{e}");
    }
}
