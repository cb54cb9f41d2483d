//! `cellgen envsubst`: stdin to stdout, byte for byte, with variables from the environment and
//! `--from` files (a ConfigMap or a plain map; later files win over earlier ones and over the
//! environment), Flux's strict mode and `$$` escaping.

mod support;

use std::fs;
use std::path::Path;

use support::*;

struct Out {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

fn envsubst(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Out {
    let mut cmd = cellgen();
    cmd.arg("envsubst").args(args).write_stdin(stdin);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cannot run cellgen");
    Out {
        code: out.status.code().expect("cellgen was killed"),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[track_caller]
fn assert_output(args: &[&str], env: &[(&str, &str)], stdin: &str, want: &str) {
    let out = envsubst(args, env, stdin);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        String::from_utf8(out.stdout).expect("UTF-8"),
        want,
        "envsubst {args:?} of {stdin:?}"
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn environment_variables_byte_for_byte() {
    let env = [("cluster_name", "eu-west-2-prod"), ("region", "eu-west-2")];
    assert_output(
        &[],
        &env,
        "name: ${cluster_name}\n",
        "name: eu-west-2-prod\n",
    );
    // No trailing newline stays without one; CRLF and tabs are kept; unbraced $x is text.
    assert_output(&[], &env, "a: ${region}", "a: eu-west-2");
    assert_output(
        &[],
        &env,
        "a:\t${region}\r\nb: $region\r\n",
        "a:\teu-west-2\r\nb: $region\r\n",
    );
    assert_output(
        &["--strict"],
        &env,
        "x: ${cluster_name}-${region}\ny: ${missing:-fallback}\nz: ${region^^}\n",
        "x: eu-west-2-prod-eu-west-2\ny: fallback\nz: EU-WEST-2\n",
    );
    assert_output(&[], &[], "", "");
    assert_output(
        &[],
        &env,
        "ünïcode: ${region} ✓\n",
        "ünïcode: eu-west-2 ✓\n",
    );
}

#[test]
fn from_files_configmap_and_plain_map_later_wins() {
    let dir = temp_dir();
    let configmap = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cell-metadata\n  namespace: flux-system\ndata:\n  cluster_name: from-configmap\n  vpc_id: vpc-123\n",
    );
    let plain = write(dir.path(), "plain.yaml", "cluster_name: from-plain\n");
    let env = [("cluster_name", "from-env"), ("only_env", "e")];
    let input = "c: ${cluster_name}\nv: ${vpc_id}\no: ${only_env}\n";

    assert_output(
        &["--from", &configmap],
        &env,
        input,
        "c: from-configmap\nv: vpc-123\no: e\n",
    );
    assert_output(
        &["--from", &configmap, "--from", &plain],
        &env,
        input,
        "c: from-plain\nv: vpc-123\no: e\n",
    );
    assert_output(
        &["--from", &plain, "--from", &configmap],
        &env,
        input,
        "c: from-configmap\nv: vpc-123\no: e\n",
    );
    assert_output(
        &["--strict", "--from", &plain],
        &[],
        "c: ${cluster_name}\n",
        "c: from-plain\n",
    );

    let out = envsubst(&["--from", "/nonexistent/values.yaml"], &[], "a\n");
    assert_ne!(out.code, 0);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("/nonexistent/values.yaml"),
        "{}",
        out.stderr
    );
}

#[test]
fn strict_mode_fails_on_a_missing_variable_with_its_line() {
    let out = envsubst(
        &["--strict"],
        &[("present", "p")],
        "a: ${present}\nb: ok\nc: ${x}\n",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "nothing is printed on failure");
    assert!(
        out.stderr.contains("variable not set (strict mode): \"x\"")
            && out.stderr.contains("line 3"),
        "{}",
        out.stderr
    );
    // Present but empty is set.
    assert_output(&["--strict"], &[("x", "")], "c: '${x}'\n", "c: ''\n");
}

#[test]
fn without_strict_a_missing_variable_is_empty() {
    let out = envsubst(&[], &[], "a: '${not_set_anywhere}'\nb: ${x:-d}\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "a: ''\nb: d\n");
}

#[test]
fn dollar_dollar_escapes() {
    let env = [("v", "value")];
    assert_output(&["--strict"], &env, "a: $${v}\n", "a: ${v}\n");
    assert_output(&["--strict"], &env, "a: $$${v}\n", "a: $value\n");
    assert_output(
        &["--strict"],
        &env,
        "a: $${undefined}\n",
        "a: ${undefined}\n",
    );
    assert_output(&[], &env, "price: $$5 and $5\n", "price: $5 and $5\n");
}

#[test]
fn syntax_errors_name_the_line() {
    let out = envsubst(&[], &[], "a\nb: ${v-d}\n");
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("line 2") && out.stderr.contains("missing closing brace"),
        "{}",
        out.stderr
    );
}
