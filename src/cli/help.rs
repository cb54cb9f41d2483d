//! What `--help` and the man pages add to the flags: examples per command and the exit status.

// clap prints the doc comments as the help text, where `<cell>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use super::*;

/// How every command exits, under `--help` and in the man pages.
pub const EXIT_STATUS: &str =
    "  0    success (check, verify: no errors, warnings allowed; diff --exit-code: nothing changed)
  1    failure: an error, findings of check or verify, conflicts written by upgrade, changes
       found by diff --exit-code
  2    usage error: a bad flag or name, or a value missing with no terminal to ask on
  130  cancelled with Ctrl-C (128 + the signal for another one); nothing half-written is left";

/// (an example, what it does).
type Example = (&'static str, &'static str);

/// Examples per command, as typed in a repository (`cellgen new` makes one in an empty Git
/// directory): (command path, [(example, what it does)]).
const EXAMPLES: &[(&[&str], &[Example])] = &[
    (
        &["init"],
        &[(
            "cellgen init --git-url ssh://git@github.com/acme/infra.git --admin-role-arn arn:aws:iam::123456789012:role/platform-admin",
            "the repository scaffold alone",
        )],
    ),
    (
        &["new"],
        &[
            (
                "cellgen new eu-west-2-prod --git-url ssh://git@github.com/acme/infra.git --admin-role-arn arn:aws:iam::123456789012:role/platform-admin",
                "the first cell, and the repository with it",
            ),
            (
                "cellgen new us-east-1-staging --components karpenter,kyverno",
                "another cell, with components",
            ),
            (
                "cellgen new us-east-1-staging --dry-run",
                "the diff, nothing written",
            ),
        ],
    ),
    (
        &["add-component"],
        &[(
            "cellgen add-component karpenter --cell eu-west-2-prod",
            "Karpenter in one cell",
        )],
    ),
    (
        &["remove-component"],
        &[(
            "cellgen remove-component karpenter --cell eu-west-2-prod",
            "the exact inverse",
        )],
    ),
    (
        &["remove-cell"],
        &[
            (
                "cellgen remove-cell us-east-1-staging",
                "the Flux side, and the tear-down to run",
            ),
            (
                "cellgen remove-cell us-east-1-staging --terraform-destroyed",
                "the stack too, once destroyed",
            ),
        ],
    ),
    (
        &["set-version"],
        &[
            (
                "cellgen set-version cert-manager v1.21.1 --env dev",
                "the dev cells first",
            ),
            (
                "cellgen set-version cilium 1.19.1 --env dev",
                "Cilium, per environment",
            ),
        ],
    ),
    (
        &["key", "add"],
        &[(
            "cellgen key add jobs_queue_url --terraform aws_sqs_queue.jobs.url --example https://sqs.eu-west-2.amazonaws.com/123456789012/jobs --description \"The jobs queue\"",
            "a key on both sides",
        )],
    ),
    (
        &["key", "rename"],
        &[(
            "cellgen key rename jobs_queue_url job_queue_url",
            "everywhere at once",
        )],
    ),
    (
        &["key", "remove"],
        &[("cellgen key remove job_queue_url", "a key no manifest uses")],
    ),
    (
        &["upgrade"],
        &[(
            "cellgen upgrade --dry-run",
            "what a newer cellgen would change",
        )],
    ),
    (
        &["list"],
        &[
            ("cellgen list", "the cells"),
            ("cellgen list components", "the catalog"),
        ],
    ),
    (
        &["check"],
        &[
            ("cellgen check", "every cell"),
            ("cellgen check --format github", "as CI runs it"),
        ],
    ),
    (
        &["render"],
        &[(
            "cellgen render eu-west-2-prod --layer configs",
            "what Flux would apply",
        )],
    ),
    (
        &["diff"],
        &[(
            "cellgen diff --base origin/main",
            "what each cell would apply differently",
        )],
    ),
    (
        &["verify"],
        &[(
            "kubectl get configmap cell-metadata -n flux-system -o yaml | cellgen verify eu-west-2-prod --from /dev/stdin",
            "a live cell against the contract",
        )],
    ),
    (
        &["explain"],
        &[(
            "cellgen explain cluster_name",
            "where a key comes from and who reads it",
        )],
    ),
    (
        &["completions"],
        &[
            (
                "cellgen completions bash > ~/.local/share/bash-completion/completions/cellgen",
                "a static script",
            ),
            (
                "source <(COMPLETE=bash cellgen)",
                "completing cell, component, layer and key names too",
            ),
        ],
    ),
];

fn after_help(examples: &[Example]) -> String {
    let mut text = String::from("Examples:\n");
    for (example, what) in examples {
        text.push_str(&format!("  # {what}\n  {example}\n"));
    }
    format!("{text}\nExit status:\n{EXIT_STATUS}")
}

/// The command line with its examples and exit status (what `--help`, the man pages and the
/// completions are made from).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command().after_long_help(after_help(&[
        (
            "cellgen new eu-west-2-prod --git-url ssh://git@github.com/acme/infra.git --admin-role-arn arn:aws:iam::123456789012:role/platform-admin",
            "a repository and its first cell",
        ),
        ("cellgen check", "what CI runs"),
    ]));
    for (path, examples) in EXAMPLES {
        let text = after_help(examples);
        command = match path {
            [one] => command.mut_subcommand(*one, |c| c.after_long_help(text)),
            [one, two] => command.mut_subcommand(*one, |c| {
                c.mut_subcommand(*two, |c| c.after_long_help(text))
            }),
            _ => command,
        };
    }
    // Every other command still says how it exits.
    let names: Vec<String> = command
        .get_subcommands()
        .filter(|c| c.get_after_long_help().is_none())
        .map(|c| c.get_name().to_string())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |c| {
            c.after_long_help(format!("Exit status:\n{EXIT_STATUS}"))
        });
    }
    command
}
