@kep-5007
Feature: A restarted scheduler picks up a pod waiting in PreBind from the API alone (KEP-5007 risks)

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"
    And the objects of manifest "fabric-two-gpus.yaml"

  Rule: KEP-5007/RESTART-RESUMES  After a restart the scheduler waits again or proceeds, keeping the deadline

    Scenario: Restarted while the device is not ready, the scheduler waits again and binds when it is
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And kube-scheduler restarts
      Then pod "trainer" waits in PreBind
      And the claim of pod "trainer" is allocated device "gpu-0"
      When the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

    Scenario: Restarted after the device became ready, the scheduler binds at once
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer"
      And kube-scheduler restarts
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" is allocated device "gpu-0"

    Scenario: A restart does not give the wait a fresh ten minutes
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 8 minutes pass
      And kube-scheduler restarts
      Then pod "trainer" waits in PreBind
      When 2 minutes pass
      Then pod "trainer" was sent back from PreBind
      And the claim of pod "trainer" was cleared
