//! Shared helpers for cellgen's integration tests: running the binary, snapshotting a directory
//! tree, and the external checkers generated files must pass (kubectl kustomize, HashiCorp's HCL
//! parser, the Flux CRD schemas).
//!
//! Every test file uses only part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::OnceLock;

use serde_json::{Map, Value};
use tempfile::TempDir;

pub mod console;
pub mod flux_instance;
pub mod messages;
pub mod terraform;
pub mod tools;

// Each test file uses some of them.
#[allow(unused_imports)]
pub use messages::{
    assert_error, assert_error_code, assert_mentions, assert_never_mentions, stderr_mentions,
};

/// The Git URL every generated test repository syncs from.
pub const GIT_URL: &str = "ssh://git@github.com/acme/infra.git";
/// The cluster admin role every test repository names (`--admin-role-arn`): without one, a new
/// repository is refused unless `--allow-no-admin`.
pub const ADMIN_ROLE: &str = "arn:aws:iam::123456789012:role/platform-admin";
/// The hosted zone every test repository gives external-dns and cert-manager (`--dns-zones`).
pub const DNS_ZONE: &str = "example.com";

/// The Flux layers of the default cellgen.yaml, in order.
pub const LAYERS: &[&str] = &["controllers", "configs", "apps"];

// ---------------------------------------------------------------------------------------------
// Running cellgen
// ---------------------------------------------------------------------------------------------

/// The cellgen binary, never prompting (`CELLGEN_NO_INPUT=1`), with an environment that does
/// not depend on the machine: no colour settings inherited, and git never looks above the
/// system temp directory for an `origin` remote.
pub fn cellgen() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_cellgen"));
    isolate(cmd.env("CELLGEN_NO_INPUT", "1"));
    cmd
}

/// Environment shared by every way of starting cellgen (assert_cmd or a PTY).
pub fn isolate<C: EnvCommand>(cmd: &mut C) -> &mut C {
    for var in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR"] {
        cmd.remove_env(var);
    }
    cmd.set_env(
        "GIT_CEILING_DIRECTORIES",
        std::env::temp_dir().to_string_lossy().as_ref(),
    );
    cmd.set_env("GIT_CONFIG_NOSYSTEM", "1");
    cmd.set_env("LC_ALL", "C");
    cmd
}

/// The two command types tests start cellgen with.
pub trait EnvCommand {
    fn set_env(&mut self, key: &str, value: &str);
    fn remove_env(&mut self, key: &str);
}

impl EnvCommand for assert_cmd::Command {
    fn set_env(&mut self, key: &str, value: &str) {
        self.env(key, value);
    }
    fn remove_env(&mut self, key: &str) {
        self.env_remove(key);
    }
}

impl EnvCommand for StdCommand {
    fn set_env(&mut self, key: &str, value: &str) {
        self.env(key, value);
    }
    fn remove_env(&mut self, key: &str) {
        self.env_remove(key);
    }
}

/// A fresh temporary directory (outside any git repository or cellgen repository we know of).
pub fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("cellgen-test-")
        .tempdir()
        .expect("cannot create a temporary directory")
}

/// Copies the tree under `from` into `to` (created where missing).
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `cellgen -C <dir> new <args…> --git-url GIT_URL` and fails the test with cellgen's
/// output if it does not succeed.
pub fn new_cell(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = cellgen()
        .arg("-C")
        .arg(dir)
        .arg("new")
        .args(args)
        .args(["--git-url", GIT_URL, "--dns-zones", DNS_ZONE])
        .args(["--admin-role-arn", ADMIN_ROLE])
        .output()
        .expect("cannot run cellgen");
    assert!(
        output.status.success(),
        "`cellgen new {}` failed with {}\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs git in `dir` with a fixed identity and no user or system configuration (no signing, branch
/// `main`), failing the test when it fails; returns its standard output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = StdCommand::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary repository with `cells` generated in order. Each entry is a cell name optionally
/// followed by flags, e.g. `"us-east-1-staging --egress-gateway"`.
pub fn new_repo(cells: &[&str]) -> TempDir {
    let dir = temp_dir();
    for cell in cells {
        let args: Vec<&str> = cell.split_whitespace().collect();
        new_cell(dir.path(), &args);
    }
    dir
}

/// Cell directories under `cells/` of a repository.
pub fn cell_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(root.join("cells"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------
// Directory trees
// ---------------------------------------------------------------------------------------------

/// Every entry under a directory, by relative path: file contents, or a marker for directories
/// and symlinks, so that creating an empty directory also counts as a change.
pub type Tree = BTreeMap<PathBuf, Vec<u8>>;

const DIR_MARKER: &[u8] = b"\0<directory>\0";

/// Every file and directory under `dir` (dotfiles included, `dir` itself excluded).
pub fn tree_hash(dir: &Path) -> Tree {
    let mut tree = Tree::new();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.unwrap_or_else(|e| panic!("cannot walk {}: {e}", dir.display()));
        let rel = entry.path().strip_prefix(dir).unwrap().to_path_buf();
        let ft = entry.file_type();
        let value = if ft.is_dir() {
            DIR_MARKER.to_vec()
        } else if ft.is_symlink() {
            let target = fs::read_link(entry.path()).unwrap();
            format!("\0<symlink>\0{}", target.display()).into_bytes()
        } else {
            fs::read(entry.path())
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", entry.path().display()))
        };
        tree.insert(rel, value);
    }
    tree
}

/// Only the files of a tree (directories dropped).
pub fn files_of(tree: &Tree) -> BTreeMap<PathBuf, Vec<u8>> {
    tree.iter()
        .filter(|(_, v)| v.as_slice() != DIR_MARKER)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What differs between two trees, one line per path; empty when they are equal.
pub fn tree_diff(before: &Tree, after: &Tree) -> Vec<String> {
    let paths: BTreeSet<&PathBuf> = before.keys().chain(after.keys()).collect();
    paths
        .into_iter()
        .filter_map(|p| match (before.get(p), after.get(p)) {
            (None, Some(_)) => Some(format!("added    {}", p.display())),
            (Some(_), None) => Some(format!("removed  {}", p.display())),
            (Some(a), Some(b)) if a != b => Some(format!("changed  {}", p.display())),
            _ => None,
        })
        .collect()
}

/// Fails the test listing every path that differs.
#[track_caller]
pub fn assert_tree_unchanged(before: &Tree, after: &Tree, context: &str) {
    let diff = tree_diff(before, after);
    assert!(
        diff.is_empty(),
        "{context}: the directory changed:\n  {}",
        diff.join("\n  ")
    );
}

pub fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// kubectl kustomize
// ---------------------------------------------------------------------------------------------

/// `kubectl kustomize <dir>`: the rendered YAML, or kubectl's error output.
pub fn kustomize_build(dir: &Path) -> Result<String, String> {
    let output = StdCommand::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run `kubectl kustomize` (is kubectl installed?): {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "`kubectl kustomize {}` failed ({}):\n{}",
            dir.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// YAML
// ---------------------------------------------------------------------------------------------

/// A parsed YAML document and where it came from (a file, or a description like
/// `kubectl kustomize cells/x`).
#[derive(Debug, Clone)]
pub struct YamlDoc {
    pub source: String,
    pub value: Value,
}

/// Every non-empty document of a multi-document YAML text.
pub fn parse_yaml_docs(source: &str, text: &str) -> Result<Vec<YamlDoc>, String> {
    use serde::Deserialize;
    let mut docs = Vec::new();
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(doc)
            .map_err(|e| format!("{source}: document {}: not valid YAML: {e}", i + 1))?;
        if !value.is_null() {
            docs.push(YamlDoc {
                source: source.to_string(),
                value,
            });
        }
    }
    Ok(docs)
}

/// The documents of a YAML file, failing the test if it does not parse.
pub fn load_yaml_file(path: &Path) -> Vec<YamlDoc> {
    parse_yaml_docs(&path.display().to_string(), &read(path)).unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------------------------------------
// HCL (HashiCorp's parser, through @cdktf/hcl2json)
// ---------------------------------------------------------------------------------------------

pub fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools")
}

/// Parses every `.tf` and `.tfvars` file of `dir` with tests/tools/hcl2json.mjs:
/// `{"<file>": <hcl2json output>}`, or the parser's error naming the file.
pub fn try_hcl_parse_dir(dir: &Path) -> Result<Value, String> {
    run_hcl2json(&[dir])
}

/// [`hcl_parse_dir`] for several directories in one run of the parser (loading it is most of
/// the time a parse takes), in the order given.
pub fn hcl_parse_dirs(dirs: &[&Path]) -> Vec<Value> {
    if dirs.len() == 1 {
        return vec![hcl_parse_dir(dirs[0])];
    }
    let mut all = run_hcl2json(dirs).unwrap_or_else(|e| panic!("HCL does not parse: {e}"));
    dirs.iter()
        .map(|d| all[d.to_string_lossy().as_ref()].take())
        .collect()
}

fn run_hcl2json(dirs: &[&Path]) -> Result<Value, String> {
    let tools = tools_dir();
    let parser = tools.join("node_modules/@cdktf/hcl2json");
    assert!(
        parser.is_dir(),
        "the HCL parser is not installed ({} is missing): run `npm ci --prefix tests/tools` first \
         (CI does; this test does not skip without it)",
        parser.display()
    );
    let output = StdCommand::new("node")
        .arg(tools.join("hcl2json.mjs"))
        .args(dirs)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (needed for tests/tools/hcl2json.mjs): {e}"));
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("hcl2json printed no JSON: {e}"))
}

/// Parses each `.tf` file of `dir` with HashiCorp's parser on its own (tests/tools/
/// hcl2json-each.mjs): file name -> its hcl2json output, or the parser's error for that file.
pub fn hcl_parse_each(dir: &Path) -> BTreeMap<String, Result<Value, String>> {
    let tools = tools_dir();
    let parser = tools.join("node_modules/@cdktf/hcl2json");
    assert!(
        parser.is_dir(),
        "the HCL parser is not installed ({} is missing): run `npm ci --prefix tests/tools` first \
         (CI does; this test does not skip without it)",
        parser.display()
    );
    let output = StdCommand::new("node")
        .arg(tools.join("hcl2json-each.mjs"))
        .arg(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run node (needed for tests/tools/hcl2json-each.mjs): {e}")
        });
    assert!(
        output.status.success(),
        "hcl2json-each.mjs failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let all: BTreeMap<String, Value> =
        serde_json::from_slice(&output.stdout).expect("hcl2json-each.mjs prints JSON");
    all.into_iter()
        .map(|(file, mut result)| {
            let parsed = match result.get_mut("ok") {
                Some(ok) => Ok(ok.take()),
                None => Err(result["error"].as_str().unwrap_or_default().to_string()),
            };
            (file, parsed)
        })
        .collect()
}

/// Like [`try_hcl_parse_dir`], failing the test on a parse error.
pub fn hcl_parse_dir(dir: &Path) -> Value {
    try_hcl_parse_dir(dir).unwrap_or_else(|e| panic!("HCL does not parse: {e}"))
}

/// Expression roots that are never declarations.
const BUILTIN_ROOTS: &[&str] = &["each", "count", "path", "self", "terraform"];

/// Resource type prefixes checked even if no provider declares them.
const KNOWN_PROVIDERS: &[&str] = &["aws", "kubernetes", "helm", "flux"];

/// Resource types Terraform itself provides (the built-in `terraform` provider).
const BUILTIN_TYPES: &[&str] = &["terraform_data"];

#[derive(Default, Debug)]
struct Declarations {
    variables: BTreeSet<String>,
    locals: BTreeSet<String>,
    modules: BTreeSet<String>,
    resources: BTreeSet<String>,
    data: BTreeSet<String>,
    outputs: BTreeSet<String>,
    required_providers: BTreeSet<String>,
    /// (file, kind, TYPE) of every resource and data source.
    typed: Vec<(String, &'static str, String)>,
    /// (file, provider) of every provider block.
    provider_blocks: Vec<(String, String)>,
}

fn keys(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// hcl2json gives a block either as an object or as a list of objects.
fn blocks(v: Option<&Value>) -> Vec<&Map<String, Value>> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_object).collect(),
        Some(Value::Object(m)) => vec![m],
        _ => Vec::new(),
    }
}

fn declarations(parsed: &Value) -> Declarations {
    let mut d = Declarations::default();
    let Some(files) = parsed.as_object() else {
        return d;
    };
    for (file, body) in files {
        if file.ends_with(".tfvars") {
            continue;
        }
        d.variables.extend(keys(body.get("variable")));
        d.modules.extend(keys(body.get("module")));
        d.outputs.extend(keys(body.get("output")));
        for locals in blocks(body.get("locals")) {
            d.locals.extend(locals.keys().cloned());
        }
        for (kind, set) in [("resource", &mut d.resources), ("data", &mut d.data)] {
            if let Some(types) = body.get(kind).and_then(Value::as_object) {
                for (ty, names) in types {
                    d.typed.push((file.clone(), kind, ty.clone()));
                    for name in keys(Some(names)) {
                        set.insert(format!("{ty}.{name}"));
                    }
                }
            }
        }
        for provider in keys(body.get("provider")) {
            d.provider_blocks.push((file.clone(), provider));
        }
        for tf in blocks(body.get("terraform")) {
            for rp in blocks(tf.get("required_providers")) {
                d.required_providers.extend(rp.keys().cloned());
            }
        }
    }
    d
}

/// Unresolved references in a parsed stack (the output of [`hcl_parse_dir`]), one readable line
/// each; empty when everything resolves. Also reports resources, data sources and provider
/// blocks whose provider is not in `required_providers`, and `.tfvars` entries that set no
/// declared variable.
pub fn check_terraform_references(parsed: &Value) -> Vec<String> {
    let d = declarations(parsed);
    let mut problems = Vec::new();
    let mut prefixes: BTreeSet<String> = KNOWN_PROVIDERS.iter().map(|p| p.to_string()).collect();
    prefixes.extend(d.required_providers.iter().cloned());
    prefixes.extend(d.provider_blocks.iter().map(|(_, p)| p.clone()));

    for (file, kind, ty) in d
        .typed
        .iter()
        .filter(|(_, _, ty)| !BUILTIN_TYPES.contains(&ty.as_str()))
    {
        let provider = ty.split('_').next().unwrap_or(ty);
        if !d.required_providers.contains(provider) {
            problems.push(format!(
                "{file}: {kind} type `{ty}` needs provider `{provider}`, which is not in required_providers ({})",
                d.required_providers.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    for (file, provider) in &d.provider_blocks {
        if !d.required_providers.contains(provider) {
            problems.push(format!(
                "{file}: provider block `{provider}` is not in required_providers"
            ));
        }
    }

    let Some(files) = parsed.as_object() else {
        return vec!["parsed stack is not a JSON object of files".into()];
    };
    for (file, body) in files {
        if file.ends_with(".tfvars") {
            for key in keys(Some(body)) {
                if !d.variables.contains(&key) {
                    problems.push(format!(
                        "{file}: sets `{key}`, which is not a declared variable"
                    ));
                }
            }
            continue;
        }
        let mut refs = Vec::new();
        // `removed`, `moved` and `import` name addresses (a removed resource is declared nowhere):
        // the checker in support/terraform reads them.
        let mut body = body.clone();
        if let Some(map) = body.as_object_mut() {
            for kind in ["removed", "moved", "import"] {
                map.remove(kind);
            }
        }
        collect_expression_refs(&body, String::new(), &mut refs);
        for (location, reference) in refs {
            if let Some(why) = unresolved(&reference, &d, &prefixes) {
                problems.push(format!("{file}: {location}: `{reference}` {why}"));
            }
        }
    }
    problems
}

/// Why a reference (its leading traversal, like `data.aws_x.y.json`) does not resolve.
fn unresolved(reference: &str, d: &Declarations, prefixes: &BTreeSet<String>) -> Option<String> {
    let parts: Vec<&str> = reference.split('.').collect();
    let (set, key, what) = match parts[0] {
        "var" => (&d.variables, parts[1].to_string(), "variable"),
        "local" => (&d.locals, parts[1].to_string(), "local value"),
        "module" => (&d.modules, parts[1].to_string(), "module"),
        "data" => {
            if parts.len() < 3 {
                return Some("is an incomplete data source reference".into());
            }
            (&d.data, format!("{}.{}", parts[1], parts[2]), "data source")
        }
        root if BUILTIN_ROOTS.contains(&root) => return None,
        root if prefixes.iter().any(|p| root.starts_with(&format!("{p}_"))) => (
            &d.resources,
            format!("{}.{}", parts[0], parts[1]),
            "resource",
        ),
        _ => return None,
    };
    (!set.contains(&key)).then(|| format!("refers to {what} `{key}`, which is not declared"))
}

/// Walks every string of a parsed file, collecting the references of its `${…}` expressions
/// with a location like `resource.aws_iam_role.app_abac[0].name`.
fn collect_expression_refs(value: &Value, location: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => {
            // A multi-line string that is not an expression is heredoc text (e.g. YAML).
            if s.contains('\n') && !s.starts_with("${") {
                return;
            }
            for expr in template_expressions(s) {
                for reference in references_in(&strip_comments(&expr)) {
                    out.push((location.clone(), reference));
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_expression_refs(item, format!("{location}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let loc = if location.is_empty() {
                    k.clone()
                } else {
                    format!("{location}.{k}")
                };
                collect_expression_refs(v, loc, out);
            }
        }
        _ => {}
    }
}

/// The bodies of the `${…}` interpolations of a template string; `$${` is a literal.
fn template_expressions(s: &str) -> Vec<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'$') {
            i += 2;
            continue;
        }
        if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'{') {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < bytes.len() && depth > 0 {
                match bytes[j] {
                    b'{' => depth += 1,
                    b'}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            out.push(s[start..j.saturating_sub(1).max(start)].to_string());
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// Drops `#` and `//` comments (outside double-quoted strings) from an expression.
fn strip_comments(expr: &str) -> String {
    let mut out = String::new();
    for line in expr.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let chars: Vec<char> = line.chars().collect();
        let mut end = chars.len();
        for (i, &c) in chars.iter().enumerate() {
            if in_string {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
            } else if c == '"' {
                in_string = true;
            } else if c == '#' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
                end = i;
                break;
            }
        }
        out.extend(&chars[..end]);
        out.push('\n');
    }
    out
}

/// Dotted traversals (`a.b.c`, at least two parts) in an expression, index brackets cut off.
fn references_in(expr: &str) -> Vec<String> {
    let is_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        if is_start(chars[i]) && !prev.is_some_and(|p| is_ident(p) || p == '.') {
            let mut parts = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                parts.push(chars[start..j].iter().collect::<String>());
                if j + 1 < chars.len() && chars[j] == '.' && is_start(chars[j + 1]) {
                    j += 1;
                } else {
                    break;
                }
            }
            if parts.len() >= 2 {
                out.push(parts.join("."));
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// `terraform fmt -check -recursive -diff` on `dir`: Ok, or the files and diff terraform printed.
/// Terraform must be installed (`.ci/run` requires it); this never skips.
pub fn terraform_fmt_check(dir: &Path) -> Result<(), String> {
    let output = StdCommand::new("terraform")
        .args(["fmt", "-check", "-recursive", "-diff", "-no-color"])
        .arg(dir)
        // No CLI configuration is needed to format, and none of the machine's may leak in.
        .env("TF_CLI_CONFIG_FILE", "/dev/null")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `terraform fmt` (is terraform installed? .ci/run requires it): {e}")
        });
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`terraform fmt -check -recursive {}` failed ({}):\n{}{}",
            dir.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Flux CRD schemas
// ---------------------------------------------------------------------------------------------

/// The Flux CRDs vendored in `schemas/flux` (see `schemas/README.md` for their source).
pub fn flux_schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/flux")
}

/// The Terraform module, provider and backend facts vendored in `schemas/terraform`.
pub fn terraform_schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/terraform")
}

/// One served version of a CRD: its strict schema compiled.
struct CrdVersion {
    file: String,
    validator: jsonschema::Validator,
}

/// (apiVersion, kind) → schema, and the API groups the CRDs define.
struct Crds {
    versions: BTreeMap<(String, String), CrdVersion>,
    groups: BTreeSet<String>,
}

fn crds() -> &'static Crds {
    static CRDS: OnceLock<Crds> = OnceLock::new();
    CRDS.get_or_init(load_crds)
}

fn load_crds() -> Crds {
    let dir = flux_schema_dir();
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "cannot read the Flux CRDs in {}: {e} (they are vendored in schemas/flux)",
            dir.display()
        )
    });
    let mut crds = Crds {
        versions: BTreeMap::new(),
        groups: BTreeSet::new(),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for doc in load_yaml_file(&path) {
            let crd = doc.value;
            if crd["kind"] != "CustomResourceDefinition" {
                continue;
            }
            let group = crd["spec"]["group"]
                .as_str()
                .expect("CRD without spec.group");
            let kind = crd["spec"]["names"]["kind"]
                .as_str()
                .expect("CRD without spec.names.kind");
            crds.groups.insert(group.to_string());
            for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
                if version["served"] == false {
                    continue;
                }
                let name = version["name"].as_str().expect("CRD version without name");
                let mut schema = version["schema"]["openAPIV3Schema"].clone();
                assert!(
                    schema.is_object(),
                    "{file}: {group}/{name} {kind} has no openAPIV3Schema"
                );
                make_strict(&mut schema, true);
                let validator = jsonschema::validator_for(&schema)
                    .unwrap_or_else(|e| panic!("{file}: {group}/{name} {kind}: bad schema: {e}"));
                crds.versions.insert(
                    (format!("{group}/{name}"), kind.to_string()),
                    CrdVersion {
                        file: file.clone(),
                        validator,
                    },
                );
            }
        }
    }
    assert!(
        !crds.versions.is_empty(),
        "no CustomResourceDefinition found in {}",
        dir.display()
    );
    crds
}

/// Adds `additionalProperties: false` to every object schema that lists `properties` and does not
/// already allow unknown fields, so a misspelt field fails like the API server's pruning would
/// reveal. `metadata` at the top level is left open (the API server validates it separately).
pub fn make_strict(schema: &mut Value, top: bool) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if map.contains_key("properties")
        && !map.contains_key("additionalProperties")
        && !map.contains_key("x-kubernetes-preserve-unknown-fields")
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, sub) in props.iter_mut() {
            if top && name == "metadata" {
                continue;
            }
            make_strict(sub, false);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = map.get_mut(key) {
            make_strict(sub, false);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(subs)) = map.get_mut(key) {
            for sub in subs {
                make_strict(sub, false);
            }
        }
    }
}

/// Validates every document whose apiVersion belongs to a Flux API group against its CRD
/// (strict, see [`make_strict`]). A Flux group/version/kind no CRD serves is an error too.
/// Documents of other groups are ignored.
pub fn validate_flux_objects(docs: &[YamlDoc]) -> Vec<String> {
    let crds = crds();
    let mut problems = Vec::new();
    for doc in docs {
        let api_version = doc.value["apiVersion"].as_str().unwrap_or_default();
        let kind = doc.value["kind"].as_str().unwrap_or_default();
        let name = doc.value["metadata"]["name"]
            .as_str()
            .unwrap_or("<no name>");
        let object = format!("{kind} {name} ({api_version})");
        let group = api_version.split_once('/').map_or("", |(g, _)| g);
        let Some(crd) = crds
            .versions
            .get(&(api_version.to_string(), kind.to_string()))
        else {
            if crds.groups.contains(group) {
                let served: Vec<String> = crds
                    .versions
                    .keys()
                    .filter(|(_, k)| k == kind)
                    .map(|(v, _)| v.clone())
                    .collect();
                problems.push(format!(
                    "{}: {object}: no Flux CRD serves this apiVersion/kind (served for {kind}: {})",
                    doc.source,
                    if served.is_empty() {
                        "none".to_string()
                    } else {
                        served.join(", ")
                    }
                ));
            }
            continue;
        };
        for err in crd.validator.iter_errors(&doc.value) {
            let pointer = err.instance_path().to_string();
            problems.push(format!(
                "{}: {object}: at `{}`: {err} (schema {})",
                doc.source,
                if pointer.is_empty() { "/" } else { &pointer },
                crd.file
            ));
        }
    }
    problems
}

/// How many documents [`validate_flux_objects`] would check (Flux objects with a served CRD).
pub fn count_flux_objects(docs: &[YamlDoc]) -> usize {
    let crds = crds();
    docs.iter()
        .filter(|d| {
            let key = (
                d.value["apiVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                d.value["kind"].as_str().unwrap_or_default().to_string(),
            );
            crds.versions.contains_key(&key)
        })
        .count()
}

/// `${name}` variables (Flux substitution) in a text, escaped `$${…}` excluded.
pub fn substitution_variables(text: &str) -> BTreeSet<String> {
    let mut vars = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        let escaped = i > 0 && rest.as_bytes()[i - 1] == b'$';
        let after = &rest[i + 2..];
        let end = after.find('}').unwrap_or(after.len());
        if !escaped {
            let name: String = after[..end]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            vars.insert(name);
        }
        rest = &after[end..];
    }
    vars
}
