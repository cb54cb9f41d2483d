//! The generated CI workflow posts `cellgen diff` on pull requests.

use super::*;

#[test]
fn the_workflow_posts_the_diff_on_pull_requests_as_one_updated_comment() {
    let dir = repo_with_history();
    let text = read(&dir.path().join(".github/workflows/cellgen.yaml"));
    let flow: serde_json::Value = yaml_serde::from_str(&text).unwrap();
    let job = &flow["jobs"]["check"];
    assert_eq!(job["permissions"]["pull-requests"], "write", "{job}");
    assert_eq!(job["permissions"]["contents"], "read", "{job}");
    let steps = job["steps"].as_array().unwrap();
    let named = |name: &str| {
        steps
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step `{name}`"))
    };
    let diff = named("cellgen diff");
    let post = named("Post cellgen diff on the pull request");
    for step in [diff, post] {
        let condition = step["if"].as_str().unwrap();
        assert!(
            condition.contains("github.event_name == 'pull_request'"),
            "{condition}"
        );
        // Informational: the check decides the job's result.
        assert_eq!(step["continue-on-error"], true);
        // Every script is valid shell.
        let script = step["run"].as_str().unwrap();
        let status = std::process::Command::new("bash")
            .args(["-n", "-c", script])
            .status()
            .unwrap();
        assert!(status.success(), "{script}");
    }
    assert_eq!(
        diff["env"]["BASE"],
        "${{ github.event.pull_request.base.sha }}"
    );
    let script = diff["run"].as_str().unwrap();
    assert!(script.contains("cellgen diff --base \"$BASE\" --format github"));
    assert!(script.contains("cellgen diff --base \"$BASE\" --format markdown >"));
    // A fork's token cannot comment: the post step runs for this repository's branches only.
    assert!(
        post["if"]
            .as_str()
            .unwrap()
            .contains("github.event.pull_request.head.repo.full_name == github.repository")
    );
    let script = post["run"].as_str().unwrap();
    assert!(
        script.contains("marker='<!-- cellgen diff -->'"),
        "{script}"
    );
    assert!(
        script.contains("-X PATCH") && script.contains("-X POST"),
        "{script}"
    );
    // The steps that post need no third-party action.
    assert!(post.get("uses").is_none() && diff.get("uses").is_none());
    // The diff runs after cellgen is installed and checked.
    let position = |name: &str| steps.iter().position(|s| s["name"] == name).unwrap();
    assert!(position("cellgen check") < position("cellgen diff"));
    assert!(position("cellgen diff") < position("Post cellgen diff on the pull request"));
}
