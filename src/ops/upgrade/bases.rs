//! The base of each three-way merge: the text cellgen generated for a file before.
//!
//! A record written since `upgrade` exists holds that text. Older records (cellgen 0.1.0's, and
//! those of versions that recorded per-file hashes only) hold its sha256: the text is then the
//! version of the file in the repository's Git history with that hash, every version of every
//! path found with one `git log --all --raw` and read with one `git cat-file --batch`. Files
//! 0.1.0 generated without recording them at all (the shared components, the CI workflow, a
//! component's `.tf`) are recognised by their text: what this cellgen generates, or what 0.1.0
//! generated where that differs (`HISTORY`), in the file or in its Git history.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use crate::model::state::sha256;
use crate::root::source::git;

/// What cellgen 0.1.0 generated where this cellgen generates something else, for the files it
/// did not record (a pattern's `*` is one path component, a cell's name). The workflow is 0.1.0's
/// template, rendered with the repository's branch.
const HISTORY: &[(&str, &str)] = &[
    (
        ".github/workflows/cellgen.yaml",
        include_str!("v0_1_0/cellgen-workflow.yaml.j2"),
    ),
    (
        "components/karpenter/configs/ec2nodeclass.yaml",
        include_str!("v0_1_0/ec2nodeclass.yaml"),
    ),
    (
        "components/kyverno/configs/disallow-privileged-containers.yaml",
        include_str!("v0_1_0/disallow-privileged-containers.yaml"),
    ),
    (
        "components/kyverno/configs/require-resource-requests.yaml",
        include_str!("v0_1_0/require-resource-requests.yaml"),
    ),
    (
        "terraform/cells/*/karpenter.tf",
        include_str!("v0_1_0/karpenter.tf"),
    ),
    // The catalog as 0.1.0 (and 0.2.0) generated it, before issue 19 moved its chart pins, the
    // external-dns zones and policy, the External Secrets store and Karpenter's NodePool.
    (
        "components/aws-ebs-csi-driver/controllers/helmrelease.yaml",
        include_str!("v0_1_0/aws-ebs-csi-driver-helmrelease.yaml"),
    ),
    (
        "components/cert-manager/controllers/helmrelease.yaml",
        include_str!("v0_1_0/cert-manager-helmrelease.yaml"),
    ),
    (
        "components/external-dns/controllers/helmrelease.yaml",
        include_str!("v0_1_0/external-dns-helmrelease.yaml"),
    ),
    (
        "components/external-secrets/controllers/helmrelease.yaml",
        include_str!("v0_1_0/external-secrets-helmrelease.yaml"),
    ),
    (
        "components/external-secrets/configs/cluster-secret-store.yaml",
        include_str!("v0_1_0/cluster-secret-store.yaml"),
    ),
    (
        "components/karpenter/configs/nodepool.yaml",
        include_str!("v0_1_0/nodepool.yaml"),
    ),
    (
        "components/karpenter/controllers/ocirepository.yaml",
        include_str!("v0_1_0/karpenter-ocirepository.yaml"),
    ),
    (
        "components/kyverno/controllers/helmrelease.yaml",
        include_str!("v0_1_0/kyverno-helmrelease.yaml"),
    ),
    (
        "components/metrics-server/controllers/helmrelease.yaml",
        include_str!("v0_1_0/metrics-server-helmrelease.yaml"),
    ),
    (
        "terraform/cells/*/cert-manager.tf",
        include_str!("v0_1_0/cert-manager.tf"),
    ),
    (
        "terraform/cells/*/external-dns.tf",
        include_str!("v0_1_0/external-dns.tf"),
    ),
    (
        "terraform/cells/*/external-secrets.tf",
        include_str!("v0_1_0/external-secrets.tf"),
    ),
];

/// Texts older cellgen versions generated at `path` without recording them (`git_branch`: the
/// branch Flux syncs from, which the CI workflow names).
pub fn history(path: &Utf8Path, git_branch: &str) -> Vec<String> {
    let parts: Vec<&str> = path.iter().collect();
    HISTORY
        .iter()
        .filter(|(pattern, _)| {
            let pattern: Vec<&str> = pattern.split('/').collect();
            pattern.len() == parts.len()
                && pattern.iter().zip(&parts).all(|(p, a)| *p == "*" || p == a)
        })
        .filter_map(|(pattern, text)| {
            if !pattern.ends_with(".github/workflows/cellgen.yaml") {
                return Some(text.to_string());
            }
            let mut env = minijinja::Environment::new();
            env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
            env.set_keep_trailing_newline(true);
            env.render_str(
                text,
                minijinja::context! { git_branch => git_branch, cellgen_version => "0.1.0" },
            )
            .ok()
        })
        .collect()
}

/// Every version the repository's Git history has of some paths, as text.
#[derive(Debug, Default)]
pub struct GitTexts {
    /// Per path, newest first: (sha256 of the text with LF line endings, the text).
    by_path: HashMap<Utf8PathBuf, Vec<(String, String)>>,
    /// Why Git could not tell, if it could not.
    pub unavailable: Option<String>,
}

impl GitTexts {
    /// Reads every version of `paths` (relative to `root`) in the history of every branch and
    /// tag, and in Git's index. Nothing is asked of Git when `paths` is empty.
    pub fn load(root: &Utf8Path, paths: &BTreeSet<Utf8PathBuf>) -> GitTexts {
        if paths.is_empty() {
            return GitTexts::default();
        }
        match read_history(root, paths) {
            Ok(by_path) => GitTexts {
                by_path,
                unavailable: None,
            },
            Err(why) => GitTexts {
                by_path: HashMap::new(),
                unavailable: Some(why),
            },
        }
    }

    /// The text of `path` with this hash, if Git has one.
    pub fn find(&self, path: &Utf8Path, hash: &str) -> Option<&str> {
        self.by_path
            .get(path)?
            .iter()
            .find(|(h, _)| h == hash)
            .map(|(_, text)| text.as_str())
    }

    /// Of `texts`, the one Git has most recently had at `path`.
    pub fn newest_of<'a>(&self, path: &Utf8Path, texts: &'a [String]) -> Option<&'a str> {
        let versions = self.by_path.get(path)?;
        versions.iter().find_map(|(hash, _)| {
            texts
                .iter()
                .find(|text| sha256(text) == *hash)
                .map(String::as_str)
        })
    }
}

fn read_history(
    root: &Utf8Path,
    paths: &BTreeSet<Utf8PathBuf>,
) -> Result<HashMap<Utf8PathBuf, Vec<(String, String)>>, String> {
    let inside = git(root)
        .args(["rev-parse", "--is-inside-work-tree"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("git could not be run ({e})"))?;
    if !inside.status.success() {
        return Err(format!("{} is not in a Git repository", root));
    }
    // Blob ids per path, newest first: staged versions, then every commit's (merges too).
    let mut blobs: HashMap<Utf8PathBuf, Vec<String>> = HashMap::new();
    let mut add = |path: &str, id: &str| {
        let path = Utf8PathBuf::from(path);
        if id.bytes().all(|b| b == b'0') || !paths.contains(&path) {
            return;
        }
        let ids = blobs.entry(path).or_default();
        if !ids.iter().any(|known| known == id) {
            ids.push(id.to_string());
        }
    };
    let staged = run(git(root).args(["ls-files", "--stage", "-z", "--", "."]))?;
    for record in staged.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = String::from_utf8_lossy(record);
        if let Some((meta, path)) = record.split_once('\t')
            && let Some(id) = meta.split(' ').nth(1)
        {
            add(path, id);
        }
    }
    let log = run(git(root).args([
        "log",
        "--all",
        "-m",
        "--raw",
        "--no-abbrev",
        "--no-renames",
        "--relative",
        "-z",
        "--format=",
        "--",
        ".",
    ]))?;
    // -z: ":<modes> <old> <new> <status>\0<path>\0", repeated.
    let mut fields = log.split(|b| *b == 0);
    while let Some(meta) = fields.next() {
        let meta = String::from_utf8_lossy(meta);
        let Some(meta) = meta.trim_start_matches('\n').strip_prefix(':') else {
            continue;
        };
        let Some(path) = fields.next() else { break };
        let path = String::from_utf8_lossy(path);
        let ids: Vec<&str> = meta.split(' ').skip(2).take(2).collect();
        if let [old, new] = ids.as_slice() {
            add(&path, new);
            add(&path, old);
        }
    }
    let ids: Vec<String> = {
        let mut all: Vec<String> = blobs.values().flatten().cloned().collect();
        all.sort();
        all.dedup();
        all
    };
    let texts = cat_blobs(root, &ids)?;
    Ok(blobs
        .into_iter()
        .map(|(path, ids)| {
            let versions = ids
                .iter()
                .filter_map(|id| texts.get(id))
                .map(|text| (sha256(text), text.clone()))
                .collect();
            (path, versions)
        })
        .collect())
}

fn run(cmd: &mut Command) -> Result<Vec<u8>, String> {
    let out = cmd
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("git could not be run ({e})"))?;
    if !out.status.success() {
        return Err(format!(
            "git failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// The blobs' contents as text with LF line endings (a blob that is not UTF-8 is left out).
fn cat_blobs(root: &Utf8Path, ids: &[String]) -> Result<HashMap<String, String>, String> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let mut child = git(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("git could not be run ({e})"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let request: String = ids.iter().map(|id| format!("{id}\n")).collect();
    // Written from another thread: git answers while it reads, and both pipes are bounded.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut reader = BufReader::new(child.stdout.take().expect("piped"));
    let mut texts = HashMap::new();
    for id in ids {
        let mut header = String::new();
        reader
            .read_line(&mut header)
            .map_err(|e| format!("git cat-file: {e}"))?;
        let parts: Vec<&str> = header.split_whitespace().collect();
        let size = match parts.as_slice() {
            [_, "blob", size] => size.parse::<usize>().map_err(|e| e.to_string())?,
            _ => continue,
        };
        let mut bytes = vec![0; size + 1];
        reader
            .read_exact(&mut bytes)
            .map_err(|e| format!("git cat-file: {e}"))?;
        bytes.pop();
        if let Ok(text) = String::from_utf8(bytes) {
            texts.insert(id.clone(), lf(text));
        }
    }
    let _ = writer.join();
    let _ = child.wait();
    Ok(texts)
}

/// As cellgen reads a file: a text whose first line ends in CRLF is read with LF.
fn lf(text: String) -> String {
    let crlf = text
        .find('\n')
        .is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r');
    if crlf {
        text.replace("\r\n", "\n")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_patterns_match_one_component_per_star() {
        let at = |p: &str| history(Utf8Path::new(p), "trunk");
        assert_eq!(at("terraform/cells/eu-west-2-prod/karpenter.tf").len(), 1);
        assert!(at("terraform/cells/a/b/karpenter.tf").is_empty());
        assert!(at("components/karpenter/configs/kustomization.yaml").is_empty());
        assert_eq!(at("components/karpenter/configs/nodepool.yaml").len(), 1);
        let workflow = at(".github/workflows/cellgen.yaml");
        assert!(workflow[0].contains("branches: [trunk]"), "{}", workflow[0]);
        assert!(workflow[0].contains("--tag v0.1.0"), "{}", workflow[0]);
    }
}
