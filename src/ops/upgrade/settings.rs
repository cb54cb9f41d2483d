//! Repository settings a newer cellgen reads that an older cellgen.yaml lacks. Each gets the
//! value the repository's cells already have (so nothing running changes), or the default a new
//! repository gets; what upgrade cannot decide is said, naming the setting. The sections are
//! inserted as the current template writes them (with its comments), before `layers:`; nothing
//! else in the file changes.

use camino::Utf8Path;
use std::collections::BTreeMap;

use serde::Serialize;

use super::Notice;
use crate::error::CellgenError;
use crate::model::config::{CONFIG_FILE, Config, line_of};
use crate::model::repo::cell_terraform_dir;
use crate::model::scaffold::{PlatformContext, RepoSettings, default_ami_alias};
use crate::model::schema::{self, SchemaFile};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

/// What 0.1.0's cluster.tf opened the public endpoint to (the eks module's default).
const OPEN_ENDPOINT: &str = "0.0.0.0/0";
const EC2NODECLASS: &str = "components/karpenter/configs/ec2nodeclass.yaml";

/// Brings cellgen.yaml's settings up to date in `plan`; says what it added and what the user
/// must decide. `cells`: every cell of the repository; `running`: the components each runs.
pub fn upgrade(
    plan: &mut Plan,
    templates: &Templates,
    cells: &[String],
    running: &BTreeMap<String, Vec<String>>,
) -> Result<(Vec<String>, Vec<Notice>), CellgenError> {
    let karpenter_used = running.values().flatten().any(|c| c == "karpenter");
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    let config = Config::parse(&text, Utf8Path::new(CONFIG_FILE))?;
    let value: yaml_serde::Value =
        crate::ports::yaml::from_str(&text).map_err(|e| CellgenError::MalformedConfig {
            path: CONFIG_FILE.into(),
            line: e.line(),
            message: e.to_string(),
        })?;
    let has = |key: &str| value.get(key).is_some();
    let mut added: Vec<String> = Vec::new();
    let mut notices: Vec<Notice> = Vec::new();
    let mut edited = text.clone();

    let mut state_region = config.terraform.state_region.clone();
    if let (Some(bucket), None) = (&config.terraform.state_bucket, &state_region) {
        let region = bucket_region(plan, &text, bucket, cells)?;
        edited = insert_under(&edited, "terraform", "state_bucket", &format!("state_region: {}", crate::ports::edit::yaml::scalar(&region)))
            .ok_or_else(|| CellgenError::MalformedConfig {
                path: CONFIG_FILE.into(),
                line: line_of(&text, "state_bucket"),
                message: format!("cannot add `state_region: {region}` under `terraform:` (no `state_bucket:` line found there); add it by hand and run `cellgen upgrade` again"),
            })?;
        added.push(format!(
            "terraform.state_region: {region} (the region every cell's backend.tf names)"
        ));
        state_region = Some(region);
    }

    let aliases = ami_aliases(plan, &config, karpenter_used, &mut notices)?;
    // What every cell runs below Flux (src/model/platform.rs, issue 19).
    let missing = super::platform::Missing {
        node_groups: !has("node_groups"),
        cilium: !has("cilium"),
        dns: !has("dns"),
        node_pool: value
            .get("karpenter")
            .is_none_or(|k| k.get("node_pool").is_none()),
    };
    let platform =
        super::platform::values(plan, &config, running, missing, &mut notices, &mut added)?;
    let rendered = render_template(templates, &config, state_region, &aliases, &platform)?;
    let mut blocks = String::new();
    if !has("cluster_access") {
        blocks.push_str(&section(&rendered, "cluster_access"));
        added.push(format!(
            "cluster_access: no admin role yet, public endpoint open to {OPEN_ENDPOINT} as before"
        ));
        notices.push(Notice {
            setting: "cluster_access.admin_role_arns".into(),
            message: "is empty: cellgen cannot tell who administers your clusters. Until now whoever created a cluster was its admin (enable_cluster_creator_admin_permissions); the upgraded cluster.tf gives access to the roles listed here and nobody else, and `terraform plan` stops while there is none. List that role, and the role CI applies Terraform with, before the next `terraform apply`.".into(),
        });
        notices.push(Notice {
            setting: "cluster_access.public_endpoint_cidrs".into(),
            message: format!("is {OPEN_ENDPOINT}, what the clusters' public API endpoint allowed before; narrow it to your CI runners' and VPN's egress CIDRs ([] turns the public endpoint off)."),
        });
    }
    if !has("network") {
        blocks.push_str(&section(&rendered, "network"));
        added.push(format!(
            "network: vpc_cidr_pool {}, /{} per cell (the defaults)",
            crate::model::config::default_vpc_cidr_pool(),
            crate::model::config::default_vpc_prefix_length()
        ));
    }
    if !has("karpenter") {
        blocks.push_str(&section(&rendered, "karpenter"));
        let list: Vec<String> = aliases.iter().map(|(e, a)| format!("{e}: {a}")).collect();
        added.push(format!("karpenter.ami_alias: {}", list.join(", ")));
    } else if missing.node_pool {
        edited = append_to_section(
            &edited,
            "karpenter",
            &subsection(&rendered, "karpenter", "node_pool"),
        );
    }
    for (key, wanted) in [
        ("node_groups", missing.node_groups),
        ("cilium", missing.cilium),
        ("dns", missing.dns && !platform.dns_zones.is_empty()),
    ] {
        if wanted {
            blocks.push_str(&section(&rendered, key));
        }
    }
    // Flux (0.3.0): the releases the Flux Operator installs, and the Git host's keys.
    if !has("flux") {
        blocks.push_str(&section(&rendered, "flux"));
        added.push(super::flux::flux_added());
    }
    edited = super::flux::known_hosts(&edited, &config, &mut added)?;
    if !blocks.is_empty() {
        edited = insert_before_top_level(&edited, "layers", &blocks);
    }
    if let Some(with_line) =
        schema::with_modeline(&edited, SchemaFile::Config, Utf8Path::new(CONFIG_FILE))
    {
        edited = with_line;
        added.push("the editor schema line (yaml-language-server)".into());
    }
    if edited != text {
        // What was added must read back as settings cellgen accepts.
        Config::parse(&edited, Utf8Path::new(CONFIG_FILE))?;
        plan.write(CONFIG_FILE, edited)?;
    }
    Ok((added, notices))
}

/// The state bucket's region, from the `region` every cell's backend.tf gives it (0.1.0 wrote
/// `terraform.state_region`, or else each cell's own region, there).
fn bucket_region(
    plan: &Plan,
    text: &str,
    bucket: &str,
    cells: &[String],
) -> Result<String, CellgenError> {
    let mut found: Vec<(String, String)> = Vec::new();
    for cell in cells {
        let path = cell_terraform_dir(cell).join("backend.tf");
        let region = plan
            .read(&path)?
            .and_then(|text| crate::ports::edit::hcl::parse_body(&text).ok())
            .and_then(|body| {
                let terraform = body.get_blocks("terraform").next()?;
                let backend = terraform
                    .body
                    .get_blocks("backend")
                    .find(|b| b.has_exact_labels(&["s3"]))?;
                match &backend.body.get_attribute("region")?.value {
                    hcl_edit::expr::Expression::String(s) => Some(s.as_str().to_string()),
                    _ => None,
                }
            });
        if let Some(region) = region {
            found.push((cell.clone(), region));
        }
    }
    let mut regions: Vec<&str> = found.iter().map(|(_, r)| r.as_str()).collect();
    regions.sort_unstable();
    regions.dedup();
    match regions.as_slice() {
        [one] => Ok(one.to_string()),
        _ => {
            let said = if found.is_empty() {
                "no cell's backend.tf names a region".to_string()
            } else {
                let list: Vec<String> = found.iter().map(|(c, r)| format!("{r} ({c})")).collect();
                format!("the cells' backend.tf name {}", list.join(", "))
            };
            Err(CellgenError::MalformedConfig {
                path: CONFIG_FILE.into(),
                line: line_of(text, "state_bucket"),
                message: format!(
                    "terraform.state_region is not set, and cellgen upgrade cannot tell the region of the state bucket `{bucket}`: {said}. The backend of every cell now uses the bucket's own region: add `state_region: <the bucket's region>` under `terraform:` and run `cellgen upgrade` again (a cell whose backend region changes needs `terraform init -reconfigure`)"
                ),
            })
        }
    }
}

/// Karpenter's AMI alias per environment: the one the repository's EC2NodeClass uses today
/// (cellgen 0.1.0 wrote `al2023@latest` there), so no node changes image; without Karpenter,
/// what a new repository gets.
fn ami_aliases(
    plan: &Plan,
    config: &Config,
    karpenter_used: bool,
    notices: &mut Vec<Notice>,
) -> Result<Vec<(String, String)>, CellgenError> {
    let current = plan
        .read(EC2NODECLASS)?
        .and_then(|text| current_alias(&text));
    let alias_for = |env: &str| match &current {
        Some(alias) if karpenter_used => alias.clone(),
        _ => default_ami_alias(env).to_string(),
    };
    let aliases: Vec<(String, String)> = config
        .environments
        .iter()
        .map(|env| (env.clone(), alias_for(env)))
        .collect();
    if let Some(alias) = current.filter(|_| karpenter_used) {
        let unpinned: Vec<&str> = aliases
            .iter()
            .filter(|(env, a)| env != "dev" && a.ends_with("@latest"))
            .map(|(env, _)| env.as_str())
            .collect();
        notices.push(Notice {
            setting: "karpenter.ami_alias".into(),
            message: format!(
                "keeps {alias} in every environment, the image {EC2NODECLASS} named, so no node changes image.{}",
                if unpinned.is_empty() {
                    String::new()
                } else {
                    format!(
                        " Karpenter advises a pinned release outside pre-production: pin {} to a tested release (e.g. {}) once dev has run it.",
                        unpinned.join(", "),
                        crate::model::scaffold::PINNED_AMI_ALIAS
                    )
                }
            ),
        });
    }
    Ok(aliases)
}

/// The literal alias of the EC2NodeClass's first amiSelectorTerm, if it is one.
fn current_alias(text: &str) -> Option<String> {
    let value: yaml_serde::Value = crate::ports::yaml::from_str(text).ok()?;
    let alias = value
        .get("spec")?
        .get("amiSelectorTerms")?
        .get(0)?
        .get("alias")?
        .as_str()?;
    (crate::model::config::ami_alias_problem(alias).is_none()).then(|| alias.to_string())
}

fn render_template(
    templates: &Templates,
    config: &Config,
    state_region: Option<String>,
    aliases: &[(String, String)],
    platform: &PlatformContext,
) -> Result<String, CellgenError> {
    #[derive(Serialize)]
    struct AmiAlias<'a> {
        environment: &'a str,
        alias: &'a str,
    }
    #[derive(Serialize)]
    struct Context<'a> {
        #[serde(flatten)]
        settings: RepoSettings,
        #[serde(flatten)]
        platform: &'a PlatformContext,
        cellgen_version: &'static str,
        vpc_cidr_pool: String,
        vpc_prefix_length: u8,
        karpenter_ami_aliases: Vec<AmiAlias<'a>>,
        flux_version: &'static str,
        flux_operator_version: &'static str,
    }
    let context = Context {
        flux_version: crate::model::flux_settings::FLUX_VERSION,
        flux_operator_version: crate::model::flux_settings::FLUX_OPERATOR_VERSION,
        settings: RepoSettings {
            git_url: config.git.url.clone(),
            git_branch: config.git.branch.clone(),
            environments: config.environments.clone(),
            kubernetes_version: config.defaults.kubernetes_version.clone(),
            state_bucket: config.terraform.state_bucket.clone(),
            state_region,
            admin_role_arns: Vec::new(),
            public_endpoint_cidrs: vec![OPEN_ENDPOINT.to_string()],
            dns_zones: Vec::new(),
            git_known_hosts: super::flux::template_known_hosts(config),
        },
        platform,
        cellgen_version: crate::model::scaffold::VERSION,
        vpc_cidr_pool: crate::model::config::default_vpc_cidr_pool(),
        vpc_prefix_length: crate::model::config::default_vpc_prefix_length(),
        karpenter_ami_aliases: aliases
            .iter()
            .map(|(environment, alias)| AmiAlias { environment, alias })
            .collect(),
    };
    templates.render("repo/cellgen.yaml", context)
}

fn is_top_level(line: &str, key: &str) -> bool {
    line.strip_prefix(key)
        .is_some_and(|rest| rest.starts_with(':'))
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// The top-level `key:` of `text` with the comment lines right above it, followed by one blank
/// line.
fn section(text: &str, key: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(at) = lines.iter().position(|l| is_top_level(l, key)) else {
        return String::new();
    };
    let mut start = at;
    while start > 0 && is_comment(lines[start - 1]) {
        start -= 1;
    }
    let mut end = at + 1;
    while end < lines.len()
        && (lines[end].starts_with([' ', '\t'])
            || (is_comment(lines[end]) && lines[end].starts_with(' ')))
    {
        end += 1;
    }
    let mut out: String = lines[start..end].iter().map(|l| format!("{l}\n")).collect();
    out.push('\n');
    out
}

/// `text` with `block` inserted above the top-level `key:` (and the comments right above it),
/// or at the end when there is no such key.
fn insert_before_top_level(text: &str, key: &str, block: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(at) = lines.iter().position(|l| is_top_level(l, key)) else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(block.trim_end_matches('\n'));
        out.push('\n');
        return out;
    };
    let mut start = at;
    while start > 0 && is_comment(lines[start - 1]) {
        start -= 1;
    }
    let mut out: String = lines[..start].concat();
    if start > 0 && !lines[start - 1].trim().is_empty() {
        out.push('\n');
    }
    out.push_str(block);
    out.push_str(&lines[start..].concat());
    out
}

/// The `key:` entry (two spaces in) of the top-level `parent:` section of `text`, with the
/// comment lines right above it and everything indented below it.
fn subsection(text: &str, parent: &str, key: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(top) = lines.iter().position(|l| is_top_level(l, parent)) else {
        return String::new();
    };
    let entry = format!("  {key}:");
    let Some(at) = lines
        .iter()
        .skip(top + 1)
        .take_while(|l| l.starts_with(' ') || l.trim().is_empty())
        .position(|l| l.starts_with(&entry))
        .map(|i| i + top + 1)
    else {
        return String::new();
    };
    let mut start = at;
    while start > top + 1 && lines[start - 1].starts_with("  #") {
        start -= 1;
    }
    let mut end = at + 1;
    while end < lines.len() && lines[end].starts_with("   ") {
        end += 1;
    }
    lines[start..end].iter().map(|l| format!("{l}\n")).collect()
}

/// `text` with `block` appended to the top-level `parent:` section, after its last indented
/// line.
fn append_to_section(text: &str, parent: &str, block: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(top) = lines.iter().position(|l| is_top_level(l, parent)) else {
        return text.to_string();
    };
    let mut last = top;
    for (i, l) in lines.iter().enumerate().skip(top + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if !l.starts_with([' ', '\t']) {
            break;
        }
        last = i;
    }
    let mut out: String = lines[..=last].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(block);
    out.push_str(&lines[last + 1..].concat());
    out
}

/// `text` with `line` added, at the same indentation, after `field:` of the top-level
/// `parent:` mapping.
fn insert_under(text: &str, parent: &str, field: &str, line: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let top = lines.iter().position(|l| is_top_level(l, parent))?;
    let mut at = None;
    for (i, l) in lines.iter().enumerate().skip(top + 1) {
        if !l.starts_with([' ', '\t']) && !l.trim().is_empty() && !is_comment(l) {
            break;
        }
        if l.trim_start().starts_with(&format!("{field}:")) {
            at = Some(i);
            break;
        }
    }
    let at = at?;
    Some(crate::ports::edit::text::insert_line_after(
        &lines, at, line,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "# settings\nschema: 1\n\ngit:\n  url: ssh://x\n\nterraform:\n  state_bucket: b # shared\n\n# Shared layers\nlayers:\n  - name: a\n    path: a\nkeys: {}\n";

    #[test]
    fn sections_go_above_layers_and_its_comment() {
        let out = insert_before_top_level(OLD, "layers", "net:\n  a: 1\n\n");
        assert!(
            out.contains("  state_bucket: b # shared\n\nnet:\n  a: 1\n\n# Shared layers\nlayers:"),
            "{out}"
        );
    }

    #[test]
    fn a_field_goes_under_its_parent() {
        let out = insert_under(OLD, "terraform", "state_bucket", "state_region: r").unwrap();
        assert!(
            out.contains("  state_bucket: b # shared\n  state_region: r\n"),
            "{out}"
        );
        assert_eq!(insert_under(OLD, "git", "state_bucket", "x"), None);
    }

    #[test]
    fn a_section_is_cut_with_its_comments() {
        let text = "a: 1\n\n# about b\n# more\nb:\n  c: 2\n  # inner\n  d: 3\n\n# next\ne: 4\n";
        assert_eq!(
            section(text, "b"),
            "# about b\n# more\nb:\n  c: 2\n  # inner\n  d: 3\n\n"
        );
    }

    #[test]
    fn a_subsection_goes_to_the_end_of_its_section() {
        let rendered = "karpenter:\n  ami_alias:\n    dev: x\n  # about\n  # pools\n  node_pool:\n    dev:\n      a: 1\n\nnext: 1\n";
        let block = subsection(rendered, "karpenter", "node_pool");
        assert_eq!(
            block,
            "  # about\n  # pools\n  node_pool:\n    dev:\n      a: 1\n"
        );
        let mine = "karpenter:\n  ami_alias: # mine\n    dev: y\n    # a comment of mine\n\n# Shared layers\nlayers: []\n";
        assert_eq!(
            append_to_section(mine, "karpenter", &block),
            "karpenter:\n  ami_alias: # mine\n    dev: y\n    # a comment of mine\n  # about\n  # pools\n  node_pool:\n    dev:\n      a: 1\n\n# Shared layers\nlayers: []\n"
        );
    }

    #[test]
    fn the_alias_is_read_only_when_literal() {
        let node_class = "spec:\n  amiSelectorTerms:\n    - alias: al2023@latest\n";
        assert_eq!(current_alias(node_class).as_deref(), Some("al2023@latest"));
        assert_eq!(
            current_alias(&node_class.replace("al2023@latest", "${karpenter_ami_alias}")),
            None
        );
    }
}
