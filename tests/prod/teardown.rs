//! Tear-down: no commit on destroy, layers that wait for what they applied, the guard before Flux goes.

use std::collections::BTreeMap;

use super::*;

/// What each resource and local value of a stack waits for: its `depends_on` and the resources
/// and locals its arguments read (`${TYPE.NAME...}`, `local.NAME`), by address.
fn dependencies(parsed: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let mut declared = BTreeSet::new();
    for body in parsed.as_object().unwrap().values() {
        for locals in body["locals"].as_array().into_iter().flatten() {
            for name in locals.as_object().unwrap().keys() {
                declared.insert(format!("local.{name}"));
            }
        }
        for (ty, resources) in body["resource"].as_object().into_iter().flatten() {
            for name in resources.as_object().unwrap().keys() {
                declared.insert(format!("{ty}.{name}"));
            }
        }
        for name in body["module"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(n, _)| n)
        {
            declared.insert(format!("module.{name}"));
        }
    }
    let reads = |text: &str| -> BTreeSet<String> {
        declared
            .iter()
            .filter(|a| {
                ["${", "("].iter().any(|open| {
                    ["}", ".", "[", ")", ","]
                        .iter()
                        .any(|close| text.contains(&format!("{open}{a}{close}")))
                })
            })
            .cloned()
            .collect()
    };
    let mut out = BTreeMap::new();
    for body in parsed.as_object().unwrap().values() {
        for locals in body["locals"].as_array().into_iter().flatten() {
            for (name, value) in locals.as_object().unwrap() {
                out.insert(format!("local.{name}"), reads(&value.to_string()));
            }
        }
        for (ty, resources) in body["resource"].as_object().into_iter().flatten() {
            for (name, instances) in resources.as_object().unwrap() {
                let mut body = instances[0].clone();
                // A destroy-time provisioner reads `self` only.
                body.as_object_mut().unwrap().remove("provisioner");
                out.insert(format!("{ty}.{name}"), reads(&body.to_string()));
            }
        }
    }
    out
}

/// Whether `from` waits, directly or not, for `to`: then Terraform destroys `from` first.
fn waits_for(deps: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(at) = stack.pop() {
        for next in deps.get(&at).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}

#[test]
fn destroy_never_commits_and_refuses_while_anything_would_outlive_the_cluster() {
    let dir = new_repo(&[&format!("{PROD} --components karpenter")]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));

    // Destroy order: the guard first, then the ConfigMap and the identities, then the
    // FluxInstance (its deletion uninstalls Flux: the operator deletes the controllers and the
    // Flux CRDs), and only then the operator that does that uninstall, and the Secret.
    let deps = dependencies(&parsed);
    for (first, then) in [
        (
            "terraform_data.teardown_guard",
            "kubernetes_config_map_v1.cell_metadata",
        ),
        (
            "kubernetes_config_map_v1.cell_metadata",
            "helm_release.flux_instance",
        ),
        (
            "kubernetes_config_map_v1.cell_metadata",
            "aws_eks_pod_identity_association.app",
        ),
        (
            "terraform_data.teardown_guard",
            "helm_release.flux_instance",
        ),
        ("helm_release.flux_instance", "helm_release.flux_operator"),
        (
            "helm_release.flux_instance",
            "kubernetes_secret_v1.flux_git",
        ),
        (
            "kubernetes_secret_v1.flux_git",
            "helm_release.flux_operator",
        ),
        ("helm_release.flux_operator", "module.system_node_group"),
    ] {
        assert!(
            waits_for(&deps, first, then),
            "{first} does not wait for {then}, so Terraform would not destroy it first: {deps:#?}"
        );
        assert!(
            !waits_for(&deps, then, first),
            "{then} waits for {first}: a cycle"
        );
    }
    let metadata = block(
        &parsed,
        "cell-metadata.tf",
        &["resource", "kubernetes_config_map_v1", "cell_metadata"],
    );
    assert!(strings(&metadata["depends_on"]).contains(&"${module.karpenter}".to_string()));
    // The FluxInstance's uninstall is waited for (helm uninstall --wait), long enough for the
    // operator's own waits (5 minutes for the controllers, 5 for the CRDs).
    let instance = block(
        &parsed,
        "flux.tf",
        &["resource", "helm_release", "flux_instance"],
    );
    assert_eq!(instance["wait"], true);
    assert!(instance["timeout"].as_u64().unwrap() >= 600, "{instance}");

    let guard = block(
        &parsed,
        "flux.tf",
        &["resource", "terraform_data", "teardown_guard"],
    );
    // Its input is what it had in 0.2.0: a new input would replace it on an upgraded cell's
    // next apply, and the replacement runs the guard.
    assert_eq!(
        guard["input"],
        serde_json::json!({"cluster": "${module.eks.cluster_name}", "region": "${var.region}"})
    );
    let exec = &guard["provisioner"]["local-exec"][0];
    assert_eq!(exec["when"], "${destroy}");
    assert_eq!(exec["environment"]["CLUSTER"], "${self.input.cluster}");
    let script = exec["command"].as_str().unwrap().replace("$${", "${");
    assert!(
        script.contains("'Suspend the flux-system Kustomization, then delete apps, then configs, then controllers, waiting for each (docs/reference.md, \"Tearing a cell down\").'"),
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
    // A stand-in kubectl that prints the lists the environment gives it, and fails when asked
    // anything else (a new query needs a look here).
    fake(
        "kubectl",
        r#"case "$*" in
  *"get crd kustomizations.kustomize.toolkit.fluxcd.io"*) [ -n "${NO_CRD:-}" ] || echo customresourcedefinition.apiextensions.k8s.io/kustomizations.kustomize.toolkit.fluxcd.io ;;
  *"-n flux-system get kustomizations.kustomize.toolkit.fluxcd.io -o name"*) echo kustomization.kustomize.toolkit.fluxcd.io/flux-system; printf "${LEFT:-}" ;;
  *"get persistentvolumes -o name"*) printf "${PVS:-}" ;;
  *"get services --all-namespaces -o jsonpath="*'?(@.spec.type=="LoadBalancer")'*) printf "${LBS:-}" ;;
  *"get ingresses --all-namespaces -o name"*) printf "${INGRESSES:-}" ;;
  *) echo "unexpected kubectl $*" >&2; exit 3 ;;
esac"#,
    );
    let guard_run = |env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&script)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
            .env("CLUSTER", "eu-west-2-prod; echo injected")
            .env("REGION", "eu-west-2");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let refused = |env: &[(&str, &str)], words: &[&str]| {
        let out = guard_run(env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "not refused with {env:?}: {stderr}");
        for word in words {
            assert!(stderr.contains(word), "no `{word}` in: {stderr}");
        }
        assert!(!String::from_utf8_lossy(&out.stdout).contains("injected"));
    };
    refused(
        &[(
            "LEFT",
            "kustomization.kustomize.toolkit.fluxcd.io/configs\\n",
        )],
        &[
            "Refusing to destroy eu-west-2-prod; echo injected while these layers exist",
            "/configs",
            "then controllers",
        ],
    );
    refused(
        &[("PVS", "persistentvolume/pvc-0a1b\\n")],
        &[
            "PersistentVolumes",
            "persistentvolume/pvc-0a1b",
            "delete the claims",
        ],
    );
    refused(
        &[("LBS", "shop/frontend\\n")],
        &["LoadBalancer Services", "shop/frontend"],
    );
    refused(
        &[("INGRESSES", "ingress.networking.k8s.io/shop\\n")],
        &["Ingresses", "ingress.networking.k8s.io/shop"],
    );
    // Layers are refused first, before anything else is asked.
    refused(
        &[("LEFT", "x/apps\\n"), ("PVS", "pv/a\\n")],
        &["these layers"],
    );
    let clean = guard_run(&[]);
    assert!(
        clean.status.success(),
        "only flux-system left, yet refused: {}",
        String::from_utf8_lossy(&clean.stderr)
    );
    // No Flux CRD (Flux never ran, or is gone): the layers are not asked about, the rest is.
    assert!(
        guard_run(&[("NO_CRD", "1"), ("LEFT", "x")])
            .status
            .success()
    );
    refused(
        &[("NO_CRD", "1"), ("PVS", "pv/a\\n")],
        &["PersistentVolumes"],
    );
    let skipped = guard_run(&[
        ("LEFT", "kustomization/apps\\n"),
        ("PVS", "pv/a\\n"),
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
