//! Tear-down: no commit on destroy, layers that wait for what they applied, the guard before Flux goes.

use super::*;

#[test]
fn destroy_never_commits_and_refuses_while_layers_exist() {
    let dir = new_repo(&[&format!("{PROD} --components karpenter")]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let flux = block(
        &parsed,
        "flux.tf",
        &["resource", "flux_bootstrap_git", "this"],
    );
    assert_eq!(
        flux["delete_git_manifests"], false,
        "destroy would push an Uninstall Flux commit to the shared branch"
    );
    assert!(flux["disable_secret_creation"].is_null());

    // The guard is destroyed before Flux and before every identity: it follows the ConfigMap,
    // which follows Flux and the identities its keys name.
    let guard = block(
        &parsed,
        "flux.tf",
        &["resource", "terraform_data", "teardown_guard"],
    );
    assert_eq!(
        strings(&guard["depends_on"]),
        ["${kubernetes_config_map_v1.cell_metadata}"]
    );
    let metadata = block(
        &parsed,
        "cell-metadata.tf",
        &["resource", "kubernetes_config_map_v1", "cell_metadata"],
    );
    let waits_for = strings(&metadata["depends_on"]);
    for needed in [
        "${flux_bootstrap_git.this}",
        "${module.karpenter}",
        "${aws_eks_pod_identity_association.app}",
    ] {
        assert!(
            waits_for.contains(&needed.to_string()),
            "the ConfigMap does not depend on {needed}"
        );
    }
    let exec = &guard["provisioner"]["local-exec"][0];
    assert_eq!(exec["when"], "${destroy}");
    assert_eq!(exec["environment"]["CLUSTER"], "${self.input.cluster}");
    let script = exec["command"].as_str().unwrap().replace("$${", "${");
    assert!(
        script.contains("apps, then configs, then controllers"),
        "{script}"
    );

    // Every layer waits for what it applied to be gone when it is deleted.
    for layer in LAYERS {
        let doc = &load_yaml_file(&root.join(format!("cells/{PROD}/{layer}.yaml")))[0];
        assert_eq!(
            doc.value["spec"]["deletionPolicy"], "WaitForTermination",
            "{layer}"
        );
        assert_eq!(doc.value["spec"]["prune"], true, "{layer}");
        assert!(validate_flux_objects(std::slice::from_ref(doc)).is_empty());
    }

    // The guard itself, run the way Terraform would, against a stand-in cluster.
    let bin = temp_dir();
    let fake = |name: &str, body: &str| {
        let path = bin.path().join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
    };
    fake("aws", "exit 0");
    fake(
        "kubectl",
        r#"case "$*" in
  *"get crd"*) [ -n "$NO_CRD" ] || echo customresourcedefinition.apiextensions.k8s.io/kustomizations.kustomize.toolkit.fluxcd.io ;;
  *"get kustomizations"*) echo kustomization.kustomize.toolkit.fluxcd.io/flux-system; printf "$LEFT" ;;
esac"#,
    );
    let guard_run = |env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&script)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
            .env("CLUSTER", PROD)
            .env("REGION", "eu-west-2")
            .env_remove("CELLGEN_SKIP_TEARDOWN_GUARD");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = guard_run(&[(
        "LEFT",
        "kustomization.kustomize.toolkit.fluxcd.io/configs\\n",
    )]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("/configs") && stderr.contains("Refusing"),
        "{stderr}"
    );
    assert!(
        guard_run(&[("LEFT", "")]).status.success(),
        "only flux-system left, yet refused"
    );
    assert!(
        guard_run(&[("NO_CRD", "1"), ("LEFT", "x")])
            .status
            .success(),
        "no Flux CRD, yet refused"
    );
    let skipped = guard_run(&[
        ("LEFT", "kustomization/apps\\n"),
        ("CELLGEN_SKIP_TEARDOWN_GUARD", "1"),
    ]);
    assert!(skipped.status.success());
}

/// A prod cluster has deletion protection (issue 19), so the printed tear-down of a prod cell
/// turns it off with an apply of its own before the destroy; other cells destroy as they are.
#[test]
fn the_tear_down_of_a_prod_cell_turns_deletion_protection_off_first() {
    let dir = new_repo(&[PROD, STAGING]);
    let root = dir.path();
    for (cell, protected) in [(PROD, true), (STAGING, false)] {
        let out = run(root, &["remove-cell", cell]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tf = format!("terraform -chdir=terraform/cells/{cell}");
        let apply = format!("{tf} apply -var deletion_protection=false");
        let lines: Vec<&str> = stdout.lines().map(str::trim).collect();
        let destroy = lines
            .iter()
            .position(|l| l.starts_with(&format!("{tf} destroy")))
            .unwrap_or_else(|| panic!("{cell}: no destroy in\n{stdout}"));
        if protected {
            let off = lines
                .iter()
                .position(|l| *l == apply)
                .unwrap_or_else(|| panic!("{stdout}"));
            assert!(off < destroy, "{stdout}");
            assert!(lines[destroy].ends_with("destroy -var deletion_protection=false"));
        } else {
            assert!(!stdout.contains("deletion_protection"), "{stdout}");
        }
    }
}
