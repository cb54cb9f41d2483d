//! Cluster access: the admin roles cellgen.yaml names get access entries, nobody gets it implicitly; the endpoints.

use super::*;
use support::console::{eval, local_source, source_of};

/// What `local.<name>` of settings.tf evaluates to: the path it follows in the YAML file that
/// `local.settings` decodes, read from the file that path resolves to.
fn settings_value(root: &Path, cell: &str, parsed: &Value, name: &str) -> Value {
    let locals = block(parsed, "settings.tf", &["locals"]);
    let decode = locals["settings"].as_str().unwrap();
    let file = decode
        .strip_prefix("${yamldecode(file(\"${path.module}/")
        .and_then(|rest| rest.strip_suffix("\"))}"))
        .unwrap_or_else(|| {
            panic!("local.settings is not yamldecode(file(\"${{path.module}}/...\")): {decode}")
        });
    let target = stack_dir(root, cell).join(file);
    assert_eq!(
        target.canonicalize().unwrap(),
        root.join("cellgen.yaml").canonicalize().unwrap(),
        "settings.tf does not read the repository's cellgen.yaml"
    );
    let settings: Value = yaml_serde::from_str(&read(&target)).unwrap();
    let expression = locals[name]
        .as_str()
        .unwrap_or_else(|| panic!("no local.{name}"));
    let path = expression
        .split("local.settings.")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .next()
        })
        .unwrap_or_else(|| panic!("local.{name} does not read local.settings: {expression}"));
    path.split('.').fold(settings, |v, key| v[key].clone())
}

#[test]
fn cluster_access_is_the_admin_roles_of_cellgen_yaml_and_nobody_implicitly() {
    let dir = temp_dir();
    new_cell(
        dir.path(),
        &[
            PROD,
            "--admin-role-arn",
            &format!("{ADMIN},{CI_ROLE}"),
            "--public-endpoint-cidrs",
            "203.0.113.0/24,198.51.100.7/32",
        ],
    );
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let eks = block(&parsed, "cluster.tf", &["module", "eks"]);
    assert!(
        eks.get("enable_cluster_creator_admin_permissions")
            .is_none(),
        "the applier is made admin implicitly"
    );
    assert_eq!(eks["authentication_mode"], "API");
    assert_eq!(eks["endpoint_private_access"], true);
    assert_eq!(
        eks["endpoint_public_access"],
        "${length(local.public_endpoint_cidrs) > 0}"
    );
    assert!(
        eks["endpoint_public_access_cidrs"]
            .as_str()
            .unwrap()
            .contains("local.public_endpoint_cidrs")
    );
    let entries = eks["access_entries"].as_str().unwrap();
    for expected in [
        "for arn in local.admin_role_arns : arn => {",
        "principal_arn = arn",
        "cluster-access-policy/AmazonEKSClusterAdminPolicy",
        "access_scope = { type = \"cluster\" }",
    ] {
        assert!(
            entries.contains(expected),
            "access_entries lacks `{expected}`:\n{entries}"
        );
    }
    // The locals resolve, through cellgen.yaml, to exactly what init was given.
    assert_eq!(
        settings_value(root, PROD, &parsed, "admin_role_arns"),
        serde_json::json!([ADMIN, CI_ROLE])
    );
    assert_eq!(
        settings_value(root, PROD, &parsed, "public_endpoint_cidrs"),
        serde_json::json!(["203.0.113.0/24", "198.51.100.7/32"])
    );
    // No admin role: the plan stops, saying why.
    let partition = block(&parsed, "cluster.tf", &["data", "aws_partition", "current"]);
    let precondition = &partition["lifecycle"][0]["precondition"][0];
    assert_eq!(
        precondition["condition"],
        "${length(local.admin_role_arns) > 0}"
    );
    assert!(
        precondition["error_message"]
            .as_str()
            .unwrap()
            .contains("cluster_access.admin_role_arns")
    );
}

#[test]
fn cluster_access_flags_are_checked() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--admin-role-arn",
                "arn:aws:sts::123456789012:assumed-role/admin/me",
            ],
            "session (assumed-role) ARN",
        ),
        (
            &["--admin-role-arn", "arn:aws:iam::1234:role/admin"],
            "is not an IAM role ARN",
        ),
        (&["--public-endpoint-cidrs", "10.0.0.1/8"], "host bits set"),
        (&["--state-region", "eu-west-2"], "give --state-bucket too"),
        (
            &["--state-bucket", "acme", "--state-region", "eu-wset-2"],
            "Did you mean `eu-west-2`?",
        ),
    ];
    for (flags, words) in cases {
        let dir = temp_dir();
        let mut args = vec![
            "new",
            PROD,
            "--git-url",
            GIT_URL,
            "--admin-role-arn",
            ADMIN_ROLE,
        ];
        args.extend_from_slice(flags);
        let out = run(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(
            stderr.contains(words),
            "{flags:?}: no `{words}` in {stderr}"
        );
        assert!(tree_hash(dir.path()).is_empty(), "{flags:?} wrote files");
    }
    // `""` turns the public endpoint off; no admin role needs --allow-no-admin, warns, and the
    // plan precondition stops it.
    let dir = temp_dir();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "new",
            PROD,
            "--public-endpoint-cidrs",
            "",
            "--allow-no-admin",
        ])
        .args(["--git-url", GIT_URL, "--dns-zones", DNS_ZONE])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no cluster admin role"));
    let config = read(&dir.path().join("cellgen.yaml"));
    assert!(
        config.contains("  public_endpoint_cidrs: []\n")
            && config.contains("  admin_role_arns: []"),
        "{config}"
    );
}

/// The plan stops unless its caller holds one of the admin roles (issue 19): compared through
/// the stack's own expressions, paths aside (an SSO role's issuer ARN has one, the list may not).
#[test]
fn a_plan_by_a_role_not_listed_stops_before_the_cluster_exists() {
    let sso = "arn:aws:iam::123456789012:role/AWSReservedSSO_PlatformAdmin_0123abcd";
    let dir = temp_dir();
    new_cell(
        dir.path(),
        &[
            PROD,
            "--admin-role-arn",
            &format!("{ADMIN},{CI_ROLE},{sso}"),
        ],
    );
    let stack = stack_dir(dir.path(), PROD);
    let parsed = hcl_parse_dir(&stack);
    let context = block(
        &parsed,
        "cluster.tf",
        &["data", "aws_iam_session_context", "current"],
    );
    assert_eq!(context["arn"], "${data.aws_caller_identity.current.arn}");
    let partition = block(&parsed, "cluster.tf", &["data", "aws_partition", "current"]);
    let precondition = partition["lifecycle"][0]["precondition"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| source_of(&p["condition"]).contains("caller_role"))
        .expect("no precondition on the caller")
        .clone();
    assert_eq!(
        source_of(&precondition["condition"]),
        "contains(local.admin_roles, local.caller_role)"
    );
    assert!(
        precondition["error_message"]
            .as_str()
            .unwrap()
            .contains("${data.aws_iam_session_context.current.issuer_arn}")
    );
    let admin_roles = local_source(&parsed, "admin_roles");
    let caller_role = local_source(&parsed, "caller_role");
    assert!(caller_role.contains("data.aws_iam_session_context.current.issuer_arn"));
    let allowed = |issuer: &str| -> bool {
        let caller = caller_role.replace(
            "data.aws_iam_session_context.current.issuer_arn",
            &format!("{issuer:?}"),
        );
        let values = eval(
            &stack,
            &[
                ("admin_roles", admin_roles.clone()),
                ("caller_role", caller),
            ],
            &[],
            &["contains(local.admin_roles, local.caller_role)"],
        )
        .unwrap();
        values[0].as_bool().unwrap()
    };
    assert!(allowed(ADMIN));
    // The CI role is listed with its path (ci/), the SSO role without the one AWS gives it.
    assert!(allowed(CI_ROLE));
    assert!(allowed(&format!(
        "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-west-2/{}",
        sso.rsplit('/').next().unwrap()
    )));
    assert!(!allowed("arn:aws:iam::123456789012:role/developer"));
    assert!(!allowed("arn:aws:iam::210987654321:role/platform-admin"));
    assert!(!allowed("arn:aws:iam::123456789012:user/platform-admin"));
}

/// The API is private unless `init` is told who may reach it (issue 19).
#[test]
fn the_public_endpoint_is_off_unless_cidrs_are_given() {
    let dir = temp_dir();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["init", "--git-url", GIT_URL, "--admin-role-arn", ADMIN])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the clusters' API stays private")
            && stderr.contains("--public-endpoint-cidrs"),
        "{stderr}"
    );
    let config = read(&dir.path().join("cellgen.yaml"));
    assert!(config.contains("  public_endpoint_cidrs: []\n"), "{config}");
    assert!(!config.contains("0.0.0.0/0"), "{config}");
}
