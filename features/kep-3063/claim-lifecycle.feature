@kep-3063
Feature: Claims are created from templates and released with their pods (KEP-3063 kube-controller-manager)

  Background:
    Given a node "worker-1"
    And the device class "gpu" selecting driver "gpu.example.com"
    And node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"

  Rule: KEP-3063/TEMPLATE-CLAIM-CREATED  A template entry yields a claim owned by the pod

    Scenario: The controller creates the claim and the pod is scheduled with it
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      Then pod "trainer" has one generated claim owned by the pod
      And the claim of pod "trainer" is allocated device "gpu-0"
      And the claim of pod "trainer" is reserved for pod "trainer"
      And pod "trainer" is bound to node "worker-1"

  Rule: KEP-3063/TEMPLATE-CLAIM-DELETED-WITH-POD  A generated claim goes with its pod

    Scenario: Deleting the pod deletes its generated claim
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And pod "trainer" is deleted
      And the scheduler runs
      Then pod "trainer" does not exist
      And the claims generated for pod "trainer" are gone

    Scenario: A finished pod's generated claim is deleted even though the pod remains
      Given a pod "job" with a claim for one "gpu" device
      And driver "gpu.example.com" takes over the devices of node "worker-1"
      When the scheduler runs
      And pod "job" finishes with phase "Succeeded"
      And the scheduler runs
      Then the claims generated for pod "job" are gone

  Rule: KEP-3063/STANDALONE-CLAIM-OUTLIVES-POD  A user's claim survives its pods and can be reused

    Scenario: After the pod is deleted the claim remains and serves the next pod
      Given a claim "workspace" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the scheduler runs
      And pod "first" is deleted
      And the scheduler runs
      Then claim "workspace" still exists
      And claim "workspace" is reserved for nobody
      When a pod "second" using claim "workspace" is created
      And the scheduler runs
      Then pod "second" is bound to node "worker-1"
      And claim "workspace" is reserved for pod "second"

    # Upstream's resourceclaim controller deallocates when it removes a claim's last consumer, never a
    # claim that nobody has reserved yet: a driver or an administrator may allocate a claim in advance.
    Scenario: A claim allocated before anyone reserves it keeps its allocation and serves a pod
      Given a claim "workspace" for one "gpu" device
      And the ResourceClaim "workspace" has the status:
        """yaml
        allocation:
          devices:
            results:
            - {request: device, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        """
      When the scheduler runs
      Then claim "workspace" is allocated device "gpu-1"
      And claim "workspace" is reserved for nobody
      When a pod "first" using claim "workspace" is created
      And the scheduler runs
      Then pod "first" is bound to node "worker-1"
      And claim "workspace" is reserved for pod "first"
      And claim "workspace" is allocated device "gpu-1"

  Rule: KEP-3063/RESERVATION-RELEASED  Pods that are gone or done no longer hold their claims

    # Both orders: removing the oldest entry instead of the deleted pod's own passes when the first pod goes.
    Scenario Outline: A deleted pod leaves reservedFor of a shared claim, the other pod keeps it (<gone> goes)
      Given a claim "shared" for one "gpu" device
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      Then claim "shared" is reserved for pods "reader, writer"
      When pod "<gone>" is deleted
      And the scheduler runs
      Then claim "shared" is reserved for pod "<stays>"
      And claim "shared" is allocated device "gpu-0"

      Examples:
        | gone   | stays  |
        | reader | writer |
        | writer | reader |

    Scenario: A finished pod leaves reservedFor and the claim's device is freed
      Given a claim "batch" for one "gpu" device
      And driver "gpu.example.com" takes over the devices of node "worker-1"
      And a pod "job" using claim "batch"
      When the scheduler runs
      And pod "job" finishes with phase "Failed"
      And the scheduler runs
      Then claim "batch" is reserved for nobody
      And claim "batch" is not allocated
