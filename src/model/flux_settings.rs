//! How every cell installs Flux and reads the repository: the `flux` section of cellgen.yaml (the
//! Flux and Flux Operator releases, read by each cell's settings.tf at plan time) and
//! `git.known_hosts` (the Git host's SSH keys the cluster verifies it with). See docs/design.md,
//! "Flux through the Flux Operator".

// schemars makes the doc comments the JSON Schema descriptions editors show, where `<cell>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use schemars::JsonSchema;
use serde::Deserialize;

/// The Flux release a new repository pins: the newest the pinned operator's image carries
/// (flux-operator v0.49.0, `config/data/flux/v2.8.7`).
pub const FLUX_VERSION: &str = "2.8.7";

/// The Flux Operator release, and of the flux-operator and flux-instance charts, a new repository
/// pins (controlplaneio-fluxcd/charts 0.49.0, appVersion v0.49.0).
pub const FLUX_OPERATOR_VERSION: &str = "0.49.0";

/// The host whose SSH keys cellgen knows.
pub const GITHUB: &str = "github.com";

/// github.com's SSH host keys as GitHub publishes them for known_hosts ("GitHub's SSH key
/// fingerprints", docs.github.com; also `ssh_keys` of <https://api.github.com/meta>).
pub const GITHUB_KNOWN_HOSTS: &[&str] = &[
    "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    "github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=",
    "github.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQCj7ndNxQowgcQnjshcLrqPEiiphnt+VTTvDP6mHBL9j1aNUkY4Ue1gvwnGLVlOhGeYrnZaMgRK6+PKCUXaDbC7qtbW8gIkhL7aGCsOr/C56SJMy/BCZfxd1nWzAOxSDPgVsmerOBYfNqltV9/hWCqBywINIR+5dIg6JTJ72pcEpEjcYgXkE2YEFXV1JHnsKgbLWNlhScqb2UmyRkQyytRLtL+38TGxkxCflmO+5Z8CSSNY7GidjMIZ7Q4zMjA2n1nGrlTDkzwDCsw+wqFPGQA179cnfGWOWRVruj16z6XyvxvjJwbz0wQZ75XK5tKSb7FNyeIEs4TT4jk+S4dhPeAUC5y+bDYirYgM4GC7uEnztnZyaVWQ7B381AK4Qdrwt51ZqExKbQpTUNn+EjqoTwvqNj4kqx5QUCI0ThS/YkOxJCXmPUWZbhjpCg56i+2aB6CmK2JGhn57K5mj0MNdBXA4/WnwH6XoPWJzK5Nyu2zB3nAZp+S5hpQs+p1vN1/wsjk=",
];

/// The Flux every cell runs, installed by the Flux Operator (terraform/cells/<cell>/flux.tf).
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct FluxSettings {
    /// The Flux release (x.y.z, e.g. 2.8.7): the FluxInstance's distribution.version. It must be one the pinned operator's image carries (its config/data/flux).
    #[schemars(pattern(r"^[0-9]+\.[0-9]+\.[0-9]+$"))]
    pub version: String,
    /// The Flux Operator release (x.y.z, e.g. 0.49.0), which is also the version of the flux-operator and flux-instance Helm charts.
    #[schemars(pattern(r"^[0-9]+\.[0-9]+\.[0-9]+$"))]
    pub operator_version: String,
}

/// Whether `v` is an exact release, x.y.z: a pin, not a range.
pub fn is_release(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Why `settings` cannot be installed, with the text to point at: the value at fault.
pub fn settings_problem(settings: &FluxSettings) -> Option<(String, String)> {
    for (field, value) in [
        ("version", &settings.version),
        ("operator_version", &settings.operator_version),
    ] {
        if !is_release(value) {
            return Some((
                format!("{field}: {value}"),
                format!(
                    "flux.{field} is `{value}`: pin an exact release, x.y.z (e.g. {})",
                    if field == "version" {
                        FLUX_VERSION
                    } else {
                        FLUX_OPERATOR_VERSION
                    }
                ),
            ));
        }
    }
    None
}

/// The host (and port, when not 22) of an ssh:// URL, as known_hosts names it: `github.com`, or
/// `[git.example.com]:2222`.
pub fn known_hosts_name(url: &str) -> Option<String> {
    let rest = url.strip_prefix("ssh://")?;
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit('@').next()?;
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => (h, Some(p)),
        _ => (host_port, None),
    };
    if host.is_empty() {
        return None;
    }
    Some(match port {
        Some(p) if p != "22" => format!("[{host}]:{p}"),
        _ => host.to_string(),
    })
}

/// The known_hosts lines cellgen can give for `url` without asking: github.com's published keys.
pub fn default_known_hosts(url: &str) -> Option<Vec<String>> {
    (known_hosts_name(url).as_deref() == Some(GITHUB))
        .then(|| GITHUB_KNOWN_HOSTS.iter().map(|l| l.to_string()).collect())
}

/// The known_hosts lines of `text`, without blank lines and comments.
pub fn known_hosts_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Why `text` (known_hosts lines) does not let Flux verify the host of `url`, with the text to
/// point at. A line is `[@marker] hosts keytype key [comment]`; one must name the URL's host
/// (a hashed name, `|1|...`, cannot be told and is taken as naming it), and no line may be
/// malformed: source-controller reads the whole file (fluxcd/pkg git/gogit, knownhosts).
pub fn known_hosts_problem(text: &str, url: &str) -> Option<(String, String)> {
    let host = known_hosts_name(url)?;
    let mut names_host = false;
    let mut any = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        any = true;
        let mut fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_some_and(|f| f.starts_with('@')) {
            fields.remove(0);
        }
        let well_formed = !line.chars().any(char::is_control)
            && fields.len() >= 3
            && (fields[1].starts_with("ssh-")
                || fields[1].starts_with("ecdsa-")
                || fields[1].starts_with("sk-"))
            && fields[2].len() >= 16
            && fields[2]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=');
        if !well_formed {
            return Some((
                line.to_string(),
                format!(
                    "git.known_hosts: `{line}` is not a known_hosts line (<host> <key type> <base64 key>, as `ssh-keyscan <host>` prints)"
                ),
            ));
        }
        if fields[0]
            .split(',')
            .any(|name| name == host || name.starts_with("|1|"))
        {
            names_host = true;
        }
    }
    if !any {
        return Some((
            "known_hosts".into(),
            format!(
                "git.known_hosts is empty: Flux verifies {host} with it; add the host's keys (`ssh-keyscan {host}`, fingerprints checked against what the host publishes)"
            ),
        ));
    }
    (!names_host).then(|| {
        (
            "known_hosts".into(),
            format!(
                "git.known_hosts names no key of {host}, the host of git.url: Flux would refuse to connect; add its keys (`ssh-keyscan {host}`, fingerprints checked against what the host publishes)"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_known_hosts_names_them() {
        assert_eq!(
            known_hosts_name("ssh://git@github.com/acme/infra.git").as_deref(),
            Some("github.com")
        );
        assert_eq!(
            known_hosts_name("ssh://git@git.example.com:2222/x.git").as_deref(),
            Some("[git.example.com]:2222")
        );
        assert_eq!(
            known_hosts_name("ssh://git@git.example.com:22/x.git").as_deref(),
            Some("git.example.com")
        );
        assert_eq!(known_hosts_name("https://github.com/x"), None);
    }

    #[test]
    fn github_gets_its_published_keys_and_others_nothing() {
        let lines = default_known_hosts("ssh://git@github.com/acme/infra.git").unwrap();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            known_hosts_problem(&lines.join("\n"), "ssh://git@github.com/acme/infra.git"),
            None
        );
        assert_eq!(
            default_known_hosts("ssh://git@gitlab.com/acme/infra.git"),
            None
        );
    }

    #[test]
    fn known_hosts_must_name_the_host_and_be_well_formed() {
        let github = GITHUB_KNOWN_HOSTS.join("\n");
        let problem = known_hosts_problem(&github, "ssh://git@gitlab.com/a/b.git").unwrap();
        assert!(
            problem.1.contains("names no key of gitlab.com"),
            "{problem:?}"
        );
        let problem = known_hosts_problem("github.com ssh-ed25519", "ssh://git@github.com/a.git");
        assert!(problem.unwrap().1.contains("not a known_hosts line"));
        let escape = format!("{}\u{1b}[2J", GITHUB_KNOWN_HOSTS[0]);
        assert!(known_hosts_problem(&escape, "ssh://git@github.com/a.git").is_some());
        assert!(
            known_hosts_problem("# nothing\n", "ssh://git@github.com/a.git")
                .unwrap()
                .1
                .contains("is empty")
        );
        let hashed = "|1|c2FsdHNhbHRzYWx0c2FsdA==|aGFzaGhhc2hoYXNoaGFzaA== ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";
        assert_eq!(
            known_hosts_problem(hashed, "ssh://git@x.example/a.git"),
            None
        );
        let ported = "[git.example.com]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";
        assert_eq!(
            known_hosts_problem(ported, "ssh://git@git.example.com:2222/a.git"),
            None
        );
    }

    #[test]
    fn flux_pins_are_exact_releases() {
        assert!(is_release(FLUX_VERSION) && is_release(FLUX_OPERATOR_VERSION));
        for bad in ["2.x", "v2.8.7", "2.8", "2.8.7-rc.1", ""] {
            let settings = FluxSettings {
                version: bad.into(),
                operator_version: FLUX_OPERATOR_VERSION.into(),
            };
            assert!(settings_problem(&settings).is_some(), "{bad}");
        }
    }
}
