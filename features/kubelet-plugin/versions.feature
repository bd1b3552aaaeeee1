@kubelet-plugin
Feature: A DRA driver's kubelet plugin speaks the DRAPlugin versions current kubelets use (v1, v1beta1)

  The driver under test is "gpu.example.com", with three GPUs on node "node-1". Kubelets since 1.34 call
  DRAPlugin v1; kubelets 1.32 and 1.33, which the version skew policy still allows next to control planes
  up to 1.36, call v1beta1. The two differ only in v1's share_id of a prepared device.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1", "gpu-2" of class "gpu" on node "node-1"

  Rule: DRA-PLUGIN/SERVES-V1  The plugin serves DRAPlugin v1 and says so at registration

    Scenario: A current kubelet finds v1 advertised and prepares a claim over it
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" for its plugin registration
      Then the registration advertises "v1.DRAPlugin"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer" over DRAPlugin v1
      Then the devices the driver prepared for the claim of pod "trainer" are those of its allocation

  Rule: DRA-PLUGIN/SERVES-V1BETA1  The plugin also serves DRAPlugin v1beta1, for older kubelets

    Scenario: An older kubelet prepares and unprepares a claim over v1beta1
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" for its plugin registration
      Then the registration advertises "v1beta1.DRAPlugin"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer" over DRAPlugin v1beta1
      Then the devices the driver prepared for the claim of pod "trainer" are those of its allocation
      When the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "trainer" over DRAPlugin v1beta1
      Then the driver unprepared the claim of pod "trainer"

    Scenario: A claim prepared over v1 is answered the same over v1beta1
      # The kubelet was downgraded while the claim stayed prepared.
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer" over DRAPlugin v1
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer" over DRAPlugin v1beta1
      Then the driver prepared the claim of pod "trainer" with the same devices each time it was asked
