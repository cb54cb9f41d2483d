//! Flux through the Flux Operator (issue 19's blocker): Terraform never writes to Git, the
//! cluster holds a read-only key, and what flux.tf hands the flux-instance chart is what the chart
//! (its values schema) and the API server (the FluxInstance CRD) accept, both vendored from the
//! pinned release in schemas/flux-operator.

use super::*;
use support::flux_instance::{flux_instance, operator_dir};

#[test]
fn the_flux_instance_is_what_the_chart_and_the_api_server_accept() {
    let dir = new_repo(&[&format!("{PROD} --components karpenter")]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let settings: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    let flux_version = settings["flux"]["version"].as_str().unwrap().to_string();
    let operator_version = settings["flux"]["operator_version"]
        .as_str()
        .unwrap()
        .to_string();
    // The pinned chart is the vendored one.
    let values_schema_file = operator_dir().join(format!(
        "flux-instance@{operator_version}.values.schema.json"
    ));
    assert!(
        values_schema_file.exists(),
        "flux.operator_version {operator_version} has no vendored chart schema in schemas/flux-operator"
    );

    // settings.tf reads the pins from cellgen.yaml.
    let locals = &parsed["settings.tf"]["locals"][0];
    assert_eq!(locals["flux_version"], "${local.settings.flux.version}");
    assert_eq!(
        locals["flux_operator_version"],
        "${local.settings.flux.operator_version}"
    );

    // Two helm_releases from the same pinned release of the charts.
    for (name, chart) in [
        ("flux_operator", "flux-operator"),
        ("flux_instance", "flux-instance"),
    ] {
        let release = block(&parsed, "flux.tf", &["resource", "helm_release", name]);
        assert_eq!(release["chart"], chart);
        assert_eq!(
            release["repository"],
            "oci://ghcr.io/controlplaneio-fluxcd/charts"
        );
        assert_eq!(release["version"], "${local.flux_operator_version}");
        assert_eq!(release["namespace"], "flux-system");
    }
    let instance = block(
        &parsed,
        "flux.tf",
        &["resource", "helm_release", "flux_instance"],
    );
    assert_eq!(
        instance["values"],
        serde_json::json!(["${yamlencode(local.flux_instance_values)}"])
    );
    let secret = block(
        &parsed,
        "flux.tf",
        &["resource", "kubernetes_secret_v1", "flux_git"],
    );
    let secret_name = secret["metadata"][0]["name"].as_str().unwrap().to_string();
    let tfvars = &parsed["terraform.tfvars"];

    // What the chart and the API server make of the values (tests/support/flux_instance.rs).
    let (object, merged) = flux_instance(&parsed, &settings).unwrap_or_else(|problems| {
        panic!("{}", problems.join("\n"));
    });
    assert_eq!(merged["instance"]["distribution"]["artifact"], "");
    let spec = &object["spec"];
    assert_eq!(object["metadata"]["name"], "flux");
    assert_eq!(spec["distribution"]["version"], flux_version.as_str());
    // No artifact: the operator installs the manifests its pinned image carries.
    assert!(spec["distribution"]["artifact"].is_null());
    assert_eq!(spec["sync"]["kind"], "GitRepository");
    assert_eq!(spec["sync"]["url"], GIT_URL);
    assert_eq!(spec["sync"]["path"], format!("cells/{PROD}"));
    assert_eq!(
        spec["sync"]["ref"],
        format!("refs/heads/{}", tfvars["git_branch"].as_str().unwrap())
    );
    assert_eq!(spec["sync"]["pullSecret"], secret_name.as_str());
    // The operator names the sync objects after the namespace: the GitRepository the layers'
    // sourceRef names.
    assert!(spec["sync"].get("name").is_none());
    for layer in LAYERS {
        let doc = &load_yaml_file(&root.join(format!("cells/{PROD}/{layer}.yaml")))[0];
        assert_eq!(doc.value["spec"]["sourceRef"]["name"], "flux-system");
    }
    let patches = spec["kustomize"]["patches"].as_array().unwrap();
    let gate = patches
        .iter()
        .find(|p| p["target"]["name"] == "kustomize-controller")
        .expect("no patch of kustomize-controller");
    assert_eq!(gate["target"]["kind"], "Deployment");
    let ops: Value = yaml_serde::from_str(gate["patch"].as_str().unwrap()).unwrap();
    assert_eq!(
        ops,
        serde_json::json!([{
            "op": "add",
            "path": "/spec/template/spec/containers/0/args/-",
            "value": "--feature-gates=StrictPostBuildSubstitutions=true"
        }])
    );
}

#[test]
fn terraform_never_writes_to_git_and_the_cluster_gets_a_read_only_key() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let files = parsed.as_object().unwrap();
    // Nothing that can push: no flux provider, no Git hosting provider.
    assert!(
        parsed["versions.tf"]["terraform"][0]["required_providers"][0]
            .get("flux")
            .is_none()
    );
    for (file, body) in files {
        assert!(body["provider"].get("flux").is_none(), "{file}");
        for ty in body["resource"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(t, _)| t)
        {
            assert!(
                !ty.starts_with("flux_")
                    && !ty.starts_with("github_")
                    && !ty.starts_with("gitlab_"),
                "{file}: {ty}"
            );
        }
    }
    assert!(
        !stack_dir(root, PROD)
            .join("flux-bootstrap-removed.tf")
            .exists()
    );

    // The Secret: written through the write-only data_wo, at a revision the user raises to rotate.
    let secret = block(
        &parsed,
        "flux.tf",
        &["resource", "kubernetes_secret_v1", "flux_git"],
    );
    assert_eq!(secret["metadata"][0]["namespace"], "flux-system");
    assert_eq!(
        secret["data_wo"],
        serde_json::json!({
            "identity": "${var.flux_git_ssh_private_key}",
            "known_hosts": "${local.git_known_hosts}",
        })
    );
    assert_eq!(secret["data_wo_revision"], "${var.flux_git_auth_revision}");
    assert!(secret.get("data").is_none());
    assert_eq!(
        parsed["settings.tf"]["locals"][0]["git_known_hosts"],
        "${try(local.settings.git.known_hosts, \"\")}"
    );
    let variable = &parsed["variables.tf"]["variable"]["flux_git_ssh_private_key"][0];
    assert_eq!(variable["ephemeral"], true);
    assert!(
        variable["description"]
            .as_str()
            .unwrap()
            .contains("WITHOUT write access"),
        "{variable}"
    );
    // The Git host's keys: github.com's published ones, which let Flux verify the URL's host.
    let config: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    let known_hosts = config["git"]["known_hosts"].as_str().unwrap();
    assert!(
        known_hosts
            .lines()
            .any(|l| l.starts_with("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5")),
        "{known_hosts}"
    );

    // The next steps say how to make the key, and that it is read-only.
    let out = run(
        root,
        &[
            "new",
            "us-east-1-dev",
            "--no-egress-gateway",
            "--components",
            "",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for needed in [
        "deploy key WITHOUT write access",
        "ssh-keygen -t ed25519",
        "\"Allow write access\" left off",
        "TF_VAR_flux_git_ssh_private_key",
    ] {
        assert!(stdout.contains(needed), "no `{needed}` in:\n{stdout}");
    }
}

#[test]
fn a_git_host_other_than_github_needs_its_keys() {
    let dir = temp_dir();
    let root = dir.path();
    let url = "ssh://git@git.example.com:2222/acme/infra.git";
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["new", PROD, "--no-input", "--git-url", url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the SSH keys of [git.example.com]:2222")
            && stderr.contains("ssh-keyscan")
            && stderr.contains("pass --git-known-hosts-file"),
        "{stderr}"
    );
    assert!(!root.join("cellgen.yaml").exists());
    // A file that names another host is refused, naming the flag.
    let keys = root.join("known_hosts");
    fs::write(&keys, "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n").unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args([
            "new",
            PROD,
            "--no-input",
            "--git-url",
            url,
            "--admin-role-arn",
            ADMIN_ROLE,
            "--git-known-hosts-file",
        ])
        .arg(&keys)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--git-known-hosts-file")
            && stderr.contains("names no key of [git.example.com]:2222"),
        "{stderr}"
    );
    fs::write(
        &keys,
        "[git.example.com]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n",
    )
    .unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args([
            "new",
            PROD,
            "--no-input",
            "--git-url",
            url,
            "--admin-role-arn",
            ADMIN_ROLE,
            "--git-known-hosts-file",
        ])
        .arg(&keys)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    assert_eq!(
        config["git"]["known_hosts"],
        "[git.example.com]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
    );
    // cellgen.yaml refuses keys of another host, naming the line.
    let text =
        read(&root.join("cellgen.yaml")).replace("[git.example.com]:2222 ssh", "gitlab.com ssh");
    fs::write(root.join("cellgen.yaml"), text).unwrap();
    let out = run(root, &["check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("cellgen.yaml")
            && stderr.contains("names no key of [git.example.com]:2222"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn on_a_terminal_the_keys_of_another_host_are_asked_for() {
    use std::time::Duration;

    use expectrl::{Eof, Session, WaitStatus};

    let dir = temp_dir();
    let keys = dir.path().join("known_hosts");
    let line = "git.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";
    fs::write(&keys, format!("# scanned\n{line}\n")).unwrap();
    let repo = dir.path().join("repo");
    fs::create_dir(&repo).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cellgen"));
    cmd.current_dir(&repo)
        .args([
            "new",
            PROD,
            "--git-url",
            "ssh://git@git.example.com/acme/infra.git",
            "--admin-role-arn",
            ADMIN,
            "--public-endpoint-cidrs",
            "203.0.113.0/24",
            "--dns-zones",
            DNS_ZONE,
            "--kubernetes-version",
            "1.34",
            "--no-egress-gateway",
            "--components",
            "",
        ])
        .env_remove("CELLGEN_NO_INPUT")
        .env("TERM", "dumb");
    isolate(&mut cmd);
    let mut session = Session::spawn(cmd).expect("cannot start cellgen on a PTY");
    session.set_expect_timeout(Some(Duration::from_secs(30)));
    let expect = |session: &mut Session, text: &str| {
        session
            .expect(text)
            .unwrap_or_else(|e| panic!("cellgen never said `{text}`: {e}"));
    };
    expect(&mut session, "ssh-keyscan git.example.com");
    expect(&mut session, "File of the Git host's SSH keys");
    session.send_line("/nonexistent/known_hosts").unwrap();
    expect(&mut session, "cannot read /nonexistent/known_hosts");
    expect(&mut session, "File of the Git host's SSH keys");
    session.send_line(keys.to_str().unwrap()).unwrap();
    expect(&mut session, "is ready");
    session.expect(Eof).expect("cellgen did not exit");
    let status = session.get_process().wait().unwrap();
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "cellgen exited with {status:?}"
    );
    let config: Value = yaml_serde::from_str(&read(&repo.join("cellgen.yaml"))).unwrap();
    assert_eq!(config["git"]["known_hosts"], format!("{line}\n"));
}
