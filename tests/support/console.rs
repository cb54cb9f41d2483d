//! Terraform expressions of a generated stack, evaluated by Terraform itself (`terraform console`
//! works offline: no provider, no module, no state). The expressions are the stack's own, read
//! from the parsed files, so a test evaluates what cellgen generated, with the cell's variables
//! and the repository's cellgen.yaml (through the stack's own settings.tf).

#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The HCL source of an expression as HashiCorp's parser (hcl2json) gives it: `${expr}` for an
/// expression, a template string otherwise.
pub fn source_of(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.as_str(),
        other => return other.to_string(),
    };
    if let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
        // One interpolation spanning the whole text is the expression itself.
        let mut depth = 0i32;
        let whole = inner.char_indices().all(|(i, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            depth >= 0 || i + 1 == inner.len()
        });
        if whole && depth == 0 && !inner.contains("}${") {
            return inner.to_string();
        }
    }
    serde_json::to_string(text).unwrap()
}

/// The source of `local.<name>`, from whichever `locals` block of the parsed stack declares it.
pub fn local_source(parsed: &Value, name: &str) -> String {
    for (_, file) in parsed.as_object().unwrap() {
        for block in file["locals"].as_array().into_iter().flatten() {
            if let Some(value) = block.get(name) {
                return source_of(value);
            }
        }
    }
    panic!("the stack declares no local.{name}");
}

/// Evaluates `expressions` (read back as JSON through `jsonencode`) in a directory beside
/// `stack` (same depth, so settings.tf reads the same cellgen.yaml), holding the stack's
/// settings.tf, the `locals` given (name, source), and a variable for each of the cell's
/// terraform.tfvars entries with its value there, overridden by `vars`.
pub fn eval(
    stack: &Path,
    locals: &[(&str, String)],
    vars: &[(&str, &str)],
    expressions: &[&str],
) -> Result<Vec<Value>, String> {
    let dir = stack.with_file_name(format!(
        "{}-console",
        stack.file_name().unwrap().to_string_lossy()
    ));
    fs::create_dir_all(&dir).unwrap();
    let result = eval_in(&dir, stack, locals, vars, expressions);
    fs::remove_dir_all(&dir).unwrap();
    result
}

fn eval_in(
    dir: &Path,
    stack: &Path,
    locals: &[(&str, String)],
    vars: &[(&str, &str)],
    expressions: &[&str],
) -> Result<Vec<Value>, String> {
    fs::copy(stack.join("settings.tf"), dir.join("settings.tf")).unwrap();
    let mut main = String::new();
    let tfvars = fs::read_to_string(stack.join("terraform.tfvars")).unwrap();
    for line in tfvars.lines() {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        let value = vars
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| format!("{v:?}"))
            .unwrap_or_else(|| value.trim().to_string());
        main.push_str(&format!(
            "variable \"{name}\" {{\n  default = {value}\n}}\n"
        ));
    }
    for (name, value) in vars {
        if !tfvars
            .lines()
            .any(|l| l.split('=').next().map(str::trim) == Some(name))
        {
            let value = match *value {
                "null" | "true" | "false" => value.to_string(),
                v => format!("{v:?}"),
            };
            main.push_str(&format!(
                "variable \"{name}\" {{\n  default = {value}\n}}\n"
            ));
        }
    }
    main.push_str("locals {\n");
    for (name, source) in locals {
        main.push_str(&format!("  {name} = {source}\n"));
    }
    main.push_str("}\n");
    fs::write(dir.join("main.tf"), &main).unwrap();
    // Without a terminal, console prints the value of its last line only: one expression, a
    // tuple of them all.
    let input = format!("jsonencode([{}])\n", expressions.join(", "));
    let mut child = Command::new("terraform")
        .args(["console", "-no-color"])
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", "/dev/null")
        .env("TF_IN_AUTOMATION", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `terraform console`: {e}"));
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() || stderr.contains("Error") {
        return Err(format!("{stdout}{stderr}\n--- main.tf:\n{main}"));
    }
    let line = stdout.trim();
    // An HCL string literal of JSON: quotes and backslashes escaped as JSON escapes them.
    let json: String =
        serde_json::from_str(line).map_err(|e| format!("not a string literal: {line}: {e}"))?;
    let values: Vec<Value> =
        serde_json::from_str(&json).map_err(|e| format!("not a JSON list: {json}: {e}"))?;
    if values.len() != expressions.len() {
        return Err(format!(
            "{} values for {} expressions: {json}",
            values.len(),
            expressions.len()
        ));
    }
    Ok(values)
}
