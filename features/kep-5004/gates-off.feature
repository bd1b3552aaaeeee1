@kep-5004
Feature: Extended resources backed by DRA, each rule with DRAExtendedResource off (KEP-5004, issue 39)

  # With the gate off kube-scheduler's DynamicResources plugin leaves extended resources alone and
  # NodeResourcesFit judges them by the node's allocatable only (v1.36.2's pkg/scheduler/framework/plugins/
  # dynamicresources and noderesources/fit.go); kube-apiserver drops a pod's status.extendedResourceClaimStatus
  # unless the stored pod already has one (pkg/api/pod/util.go). The gate turned on by default at 1.36: a 1.35
  # scheduler left at its defaults has it off.

  Background:
    Given a node "worker-1"
    And node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
    And the DeviceClass:
      """yaml
      metadata: {name: gpu.example.com}
      spec:
        selectors:
        - cel: {expression: device.driver == "gpu.example.com"}
        extendedResourceName: example.com/gpu
      """

  Rule: KEP-5004/CLASS-STANDS-FOR-RESOURCE  A class standing for the resource serves the pod through DRA

    Scenario Outline: With <gates> in a <release> scheduler, no class stands for <resource>: the pod does not fit
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources: <resources>
        """
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And pod "trainer" has no extended resource claim

      Examples:
        | release | gates                   | resource                                           | resources                                                             |
        | current | DRAExtendedResource=off | example.com/gpu                                    | {limits: {example.com/gpu: "1"}}                                      |
        | current | DRAExtendedResource=off | deviceclass.resource.kubernetes.io/gpu.example.com | {requests: {deviceclass.resource.kubernetes.io/gpu.example.com: "1"}} |
        | 1.35    | defaults                | deviceclass.resource.kubernetes.io/gpu.example.com | {requests: {deviceclass.resource.kubernetes.io/gpu.example.com: "1"}} |

    # The whole cluster with the gate off, as a cluster is run: kube-apiserver drops the class's
    # extendedResourceName too, so only the implicit name could still point at the class, and the scheduler
    # does not follow it.
    Scenario: With DRAExtendedResource off in the whole cluster, the class's implicit name does not serve the pod
      Given a cluster with feature gates "DRAExtendedResource" off
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              requests: {deviceclass.resource.kubernetes.io/gpu.example.com: "1"}
        """
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And pod "trainer" has no extended resource claim

  Rule: KEP-5004/SPECIAL-CLAIM  The scheduler writes one claim for the pod, a request per container

    Scenario Outline: With <gates> in a <release> scheduler, two containers asking for a GPU each get no claim
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "1", memory: 1Gi}
          - name: sidecar
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "1"}
        """
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And pod "trainer" has no extended resource claim

      Examples:
        | release | gates                   |
        | current | DRAExtendedResource=off |
        | 1.35    | defaults                |

  Rule: KEP-5004/POD-STATUS  The pod records which request serves which container

    Scenario Outline: With <gates> in a <release> scheduler, the pod's status maps nothing
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And pod "trainer" has no extended resource claim

      Examples:
        | release | gates                   |
        | current | DRAExtendedResource=off |
        | 1.35    | defaults                |

    # The API server's side: with the gate off a status naming a claim for extended resources is not kept.
    Scenario: With DRAExtendedResource off in kube-apiserver, a status naming the pod's extended resource claim loses it
      Given kube-apiserver with feature gates "DRAExtendedResource=off"
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "1"}
        """
      When the user updates the status of Pod "trainer":
        """yaml
        extendedResourceClaimStatus:
          resourceClaimName: trainer-extended-resources-abcde
          requestMappings:
          - {containerName: main, resourceName: example.com/gpu, requestName: container-0-request-0}
        """
      Then the request is accepted
      And the stored Pod "trainer" has no field "status.extendedResourceClaimStatus"

  Rule: KEP-5004/INIT-CONTAINERS  Init containers reuse the requests of the containers after them

    # With the gate off no request is made for any container; the node advertises no example.com/gpu, so the
    # init container's two GPUs do not fit either.
    Scenario Outline: With <gates> in a <release> scheduler, an init container and a main container asking for GPUs get no requests
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the Pod:
        """yaml
        metadata: {name: job}
        spec:
          initContainers:
          - name: warmup
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "1"}
        """
      When the scheduler runs
      Then pod "job" is not scheduled
      And pod "job" has no extended resource claim

      Examples:
        | release | gates                   |
        | current | DRAExtendedResource=off |
        | 1.35    | defaults                |

  Rule: KEP-5004/DEVICE-PLUGIN-FIRST  A node advertising the resource is served by its device plugin

    # With the gate off the device plugin is the only way: a node advertising enough still serves the pod, a
    # node advertising none (which DRA serves with the gate on) no longer does.
    Scenario Outline: With <gates> in a <release> scheduler, worker-1 advertising <advertised> example.com/gpu
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And node "worker-1" advertises <advertised> "example.com/gpu" in its allocatable resources
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      When the scheduler runs
      Then <outcome>

      Examples:
        | release | gates                   | advertised | outcome                                                                   |
        | current | DRAExtendedResource=off | 4          | pod "trainer" is bound to node "worker-1" with no extended resource claim |
        | current | DRAExtendedResource=off | 0          | pod "trainer" is not scheduled                                            |
        | 1.35    | defaults                | 0          | pod "trainer" is not scheduled                                            |

    Scenario Outline: With DRAExtendedResource off in the whole cluster, worker-1 advertising <advertised> example.com/gpu
      Given a cluster with feature gates "DRAExtendedResource" off
      And node "worker-1" advertises <advertised> "example.com/gpu" in its allocatable resources
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      When the scheduler runs
      Then <outcome>

      Examples:
        | advertised | outcome                                                                   |
        | 4          | pod "trainer" is bound to node "worker-1" with no extended resource claim |
        | 0          | pod "trainer" is not scheduled                                            |

  Rule: KEP-5004/RELEASED-WITH-POD  The claim goes with its pod and frees the devices

    # The claim made while the gate was on is the pod's (its controller owner): it goes with the pod though the
    # scheduler that made it has the gate off by then; the second pod, asking the same way, no longer fits.
    Scenario Outline: A claim made before the scheduler <turned> still goes with its pod
      Given the Pod:
        """yaml
        metadata: {name: first}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      When the scheduler runs
      Then pod "first" is bound to node "worker-1"
      When kube-scheduler restarts <restart>
      And the Pod is created:
        """yaml
        metadata: {name: second}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      And pod "first" is deleted
      And the scheduler runs
      Then the claims generated for pod "first" are gone
      And pod "second" is not scheduled
      And pod "second" has no extended resource claim

      Examples:
        | turned                  | restart                                         |
        | had its gate turned off | with feature gates "DRAExtendedResource=off"    |
        | was downgraded to 1.35  | as version "1.35" with feature gates "defaults" |
