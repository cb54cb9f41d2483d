# Karpenter's AWS side: the controller role with its Pod Identity association (kube-system/karpenter),
# the node role with the EKS access entry that lets its nodes join, and the interruption queue.
module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 21.0"

  cluster_name = module.eks.cluster_name

  namespace                       = "kube-system"
  service_account                 = "karpenter"
  create_pod_identity_association = true

  # The EC2NodeClass names this role (cell-metadata key karpenter_node_role). The module attaches the
  # CNI policy too, which Cilium in ENI mode needs on every node.
  node_iam_role_use_name_prefix = false
  node_iam_role_name            = "${var.name}-karpenter-node"
  node_iam_role_additional_policies = {
    AmazonSSMManagedInstanceCore = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
  }
  create_access_entry = true

  tags = local.tags
}
