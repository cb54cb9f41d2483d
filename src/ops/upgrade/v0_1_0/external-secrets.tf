# IAM role of the External Secrets Operator, associated with external-secrets/external-secrets. It reads
# the cell's own secrets: Secrets Manager secrets and SSM parameters named <cell>/... in the cell's region.
module "external_secrets_pod_identity" {
  source  = "terraform-aws-modules/eks-pod-identity/aws"
  version = "~> 2.0"

  # The exact name: with the module's default name prefix, aws_iam_role.name_prefix takes at
  # most 38 characters, which <cell>-external-secrets- can exceed.
  name            = "${var.name}-external-secrets"
  use_name_prefix = false

  attach_external_secrets_policy        = true
  external_secrets_secrets_manager_arns = ["arn:aws:secretsmanager:${var.region}:*:secret:${var.name}/*"]
  external_secrets_ssm_parameter_arns   = ["arn:aws:ssm:${var.region}:*:parameter/${var.name}/*"]

  associations = {
    this = {
      cluster_name    = module.eks.cluster_name
      namespace       = "external-secrets"
      service_account = "external-secrets"
    }
  }

  tags = local.tags
}
