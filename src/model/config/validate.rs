//! What `cellgen.yaml` must hold beyond its types: environments, layers, keys and settings
//! checked once it is read, each error pointing at the line that holds the value.

use camino::Utf8Path;

use super::{
    Config, SCHEMA_KEY, VPC_PREFIX_LENGTHS, admin_role_arn_problem, ami_alias_problem,
    is_dns_label, line_of,
};
use crate::error::CellgenError;

impl Config {
    pub(super) fn validate(&self, text: &str, path: &Utf8Path) -> Result<(), CellgenError> {
        let fail = |needle: &str, message: String| CellgenError::MalformedConfig {
            path: path.to_path_buf(),
            line: line_of(text, needle),
            message,
        };
        if self.environments.is_empty() {
            return Err(fail(
                "environments",
                "`environments` is empty: list at least one environment (e.g. dev, staging, prod)"
                    .into(),
            ));
        }
        for (i, env) in self.environments.iter().enumerate() {
            if self.environments[..i].contains(env) {
                return Err(fail(env, format!("environment `{env}` is listed twice")));
            }
            if env.is_empty()
                || !env
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            {
                return Err(fail(
                    env,
                    format!(
                        "environment `{env}` must be lowercase letters and digits only (it is the last part of a cell name)"
                    ),
                ));
            }
        }
        if self.layers.is_empty() {
            return Err(fail(
                "layers",
                "`layers` is empty: a cell needs at least one layer".into(),
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for layer in &self.layers {
            if !is_dns_label(&layer.name) {
                return Err(fail(
                    &layer.name,
                    format!(
                        "layer name `{}` must be a DNS label (lowercase letters, digits, dashes): it names a Flux Kustomization",
                        layer.name
                    ),
                ));
            }
            if seen.contains(&layer.name.as_str()) {
                return Err(fail(
                    &layer.name,
                    format!("layer `{}` is listed twice", layer.name),
                ));
            }
            if !crate::paths::is_clean_relative(&layer.path) {
                return Err(fail(
                    &layer.path,
                    format!(
                        "layer `{}` has path `{}`: use a relative path inside the repository, without `..`",
                        layer.name, layer.path
                    ),
                ));
            }
            for dep in &layer.depends_on {
                if !seen.contains(&dep.as_str()) {
                    return Err(fail(
                        dep,
                        format!(
                            "layer `{}` depends on `{dep}`, which is not a layer listed before it",
                            layer.name
                        ),
                    ));
                }
            }
            seen.push(&layer.name);
        }
        self.validate_settings(text, path)?;
        for (key, spec) in &self.keys {
            if key == SCHEMA_KEY {
                return Err(fail(
                    key,
                    "`schema` is reserved: its value is the top-level `schema` number".into(),
                ));
            }
            if !crate::model::keys::is_valid_key_name(key) {
                return Err(fail(
                    key,
                    format!(
                        "key `{key}` is not a valid Flux variable name: use letters, digits and underscores, not starting with a digit (e.g. `{}`)",
                        key.replace(['-', '.'], "_")
                    ),
                ));
            }
            for env in &spec.environments {
                if !self.environments.contains(env) {
                    return Err(fail(
                        key,
                        format!(
                            "key `{key}` lists environment `{env}`, which is not an environment (environments: {})",
                            self.environments.join(", ")
                        ),
                    ));
                }
            }
            if spec.component.is_some() && !(spec.cells.is_empty() && spec.environments.is_empty())
            {
                return Err(fail(
                    key,
                    format!(
                        "key `{key}` belongs to a component and lists cells or environments: the cells running the component write it; drop `cells`/`environments`"
                    ),
                ));
            }
            if let Some(old) = &spec.renamed_from
                && !crate::model::keys::is_valid_key_name(old)
            {
                return Err(fail(
                    key,
                    format!("key `{key}` has `renamed_from: {old}`, which is not a key name"),
                ));
            }
            if let Some(since) = spec.since
                && (since > self.schema || since == 0)
            {
                return Err(fail(
                    key,
                    format!(
                        "key `{key}` has `since: {since}`, but a key's number is between 1 and `schema: {}`",
                        self.schema
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The repository settings Terraform reads (cluster access, network, Karpenter): malformed
    /// values fail here, naming their line, rather than at a cell's `terraform plan`.
    fn validate_settings(&self, text: &str, path: &Utf8Path) -> Result<(), CellgenError> {
        let fail = |needle: &str, message: String| CellgenError::MalformedConfig {
            path: path.to_path_buf(),
            line: line_of(text, needle),
            message,
        };
        for arn in &self.cluster_access.admin_role_arns {
            if let Some(problem) = admin_role_arn_problem(arn) {
                return Err(fail(
                    arn,
                    format!("cluster_access.admin_role_arns: {problem}"),
                ));
            }
        }
        for cidr in &self.cluster_access.public_endpoint_cidrs {
            if let Err(problem) = crate::model::cidr::Cidr::parse(cidr) {
                return Err(fail(
                    cidr,
                    format!("cluster_access.public_endpoint_cidrs: {problem}"),
                ));
            }
        }
        let pool =
            crate::model::cidr::Cidr::parse(&self.network.vpc_cidr_pool).map_err(|problem| {
                fail("vpc_cidr_pool", format!("network.vpc_cidr_pool: {problem}"))
            })?;
        let length = self.network.vpc_prefix_length;
        if !VPC_PREFIX_LENGTHS.contains(&length) || length < pool.prefix() {
            return Err(fail(
                "vpc_prefix_length",
                format!(
                    "network.vpc_prefix_length is {length}: a cell's VPC is a /{}../{} (network.tf splits it into subnets; a /20 would give public subnets of /28, smaller than the /27 an ALB needs) and must fit in the pool {pool}",
                    VPC_PREFIX_LENGTHS.start(),
                    VPC_PREFIX_LENGTHS.end()
                ),
            ));
        }
        for overlap in &self.network.acknowledged_overlaps {
            let needle = overlap
                .cells
                .first()
                .map_or("acknowledged_overlaps", String::as_str);
            let mut cells = overlap.cells.clone();
            cells.sort();
            cells.dedup();
            if cells.len() < 2 || cells.len() != overlap.cells.len() {
                return Err(fail(
                    needle,
                    format!(
                        "network.acknowledged_overlaps: an entry names the cells whose blocks overlap, two or more and each once (e.g. `cells: [eu-west-2-prod, us-east-1-prod]`), not [{}]",
                        overlap.cells.join(", ")
                    ),
                ));
            }
            if overlap.reason.trim().is_empty() {
                return Err(fail(
                    needle,
                    format!(
                        "network.acknowledged_overlaps: the entry for {} has an empty `reason`: say why the overlap is acceptable (e.g. the cells are never routed to each other)",
                        overlap.cells.join(", ")
                    ),
                ));
            }
        }
        self.validate_flux(text, path)?;
        if let Some(karpenter) = &self.karpenter {
            for (env, alias) in &karpenter.ami_alias {
                if !self.environments.contains(env) {
                    return Err(fail(
                        &format!("{env}:"),
                        format!(
                            "karpenter.ami_alias has `{env}`, which is not an environment (environments: {})",
                            self.environments.join(", ")
                        ),
                    ));
                }
                if let Some(problem) = ami_alias_problem(alias) {
                    return Err(fail(alias, format!("karpenter.ami_alias.{env}: {problem}")));
                }
            }
            if let Some(env) = self
                .environments
                .iter()
                .find(|e| !karpenter.ami_alias.contains_key(*e))
            {
                return Err(fail(
                    "ami_alias",
                    format!(
                        "karpenter.ami_alias has no entry for environment `{env}`: add one (e.g. `{env}: al2023@v20260714`), since every cell of that environment reads it"
                    ),
                ));
            }
        }
        self.validate_platform(text, path)
    }

    /// The settings of src/model/platform.rs (node images, Cilium, DNS zones, Karpenter's NodePool).
    fn validate_platform(&self, text: &str, path: &Utf8Path) -> Result<(), CellgenError> {
        let fail = |p: crate::model::platform::Problem| CellgenError::MalformedConfig {
            path: path.to_path_buf(),
            line: line_of(text, &p.needle),
            message: p.message,
        };
        let envs = &self.environments;
        if let Some(node_groups) = &self.node_groups {
            node_groups.validate(envs, text).map_err(fail)?;
        }
        if let Some(cilium) = &self.cilium {
            cilium.validate(envs).map_err(fail)?;
        }
        if let Some(dns) = &self.dns {
            dns.validate(envs).map_err(fail)?;
        }
        if let Some(karpenter) = &self.karpenter {
            crate::model::platform::validate_node_pools(&karpenter.node_pool, envs)
                .map_err(fail)?;
        }
        Ok(())
    }

    /// Flux's settings (the pinned releases, the Git host's keys), when present: cellgen.yaml
    /// from before 0.3.0 has neither until `cellgen upgrade` adds them.
    fn validate_flux(&self, text: &str, path: &Utf8Path) -> Result<(), CellgenError> {
        use crate::model::flux_settings::{known_hosts_problem, settings_problem};
        let problem = self.flux.as_ref().and_then(settings_problem).or_else(|| {
            let hosts = self.git.known_hosts.as_ref()?;
            known_hosts_problem(hosts, &self.git.url)
        });
        match problem {
            Some((needle, message)) => Err(CellgenError::MalformedConfig {
                path: path.to_path_buf(),
                line: line_of(text, &needle),
                message,
            }),
            None => Ok(()),
        }
    }
}
