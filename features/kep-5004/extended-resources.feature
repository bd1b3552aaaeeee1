@kep-5004
Feature: Extended resources backed by DRA (KEP-5004): a pod asking for example.com/gpu the device-plugin way

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

    # An extended resource in requests needs an equal limit (the API refuses it otherwise); a limit alone is
    # defaulted into requests. The implicit class name is in kubernetes.io, a native name: a request alone is valid.
    Scenario Outline: A container asking for <resource> in its <where>
      Given the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources: <resources>
        """
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" is allocated device "gpu-0"

      Examples:
        | resource                                           | where                | resources                                                           |
        | example.com/gpu                                    | limits               | {limits: {example.com/gpu: "1"}}                                    |
        | example.com/gpu                                    | requests and limits  | {requests: {example.com/gpu: "1"}, limits: {example.com/gpu: "1"}}  |
        | deviceclass.resource.kubernetes.io/gpu.example.com | requests             | {requests: {deviceclass.resource.kubernetes.io/gpu.example.com: "1"}} |

    Scenario: Asking for more devices than the node has leaves the pod pending
      Given the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "3"}
        """
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And pod "trainer" has no extended resource claim

  Rule: KEP-5004/SPECIAL-CLAIM  The scheduler writes one claim for the pod, a request per container

    Scenario: Two containers, two requests, one claim owned by the pod
      Given the Pod:
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
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" was written by the scheduler for its extended resources
      And the claim of pod "trainer" has requests:
        """yaml
        - name: container-0-request-0
          exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}
        - name: container-1-request-0
          exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}
        """
      And the claim of pod "trainer" is reserved for pod "trainer"
      And the allocation of the claim of pod "trainer" has results:
        """yaml
        - {request: container-0-request-0, driver: gpu.example.com, pool: worker-1, device: gpu-0}
        - {request: container-1-request-0, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        """

  Rule: KEP-5004/POD-STATUS  The pod records which request serves which container

    Scenario: Request mappings name the container, the resource and the request
      Given the Pod:
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
      Then pod "trainer" maps its extended resources to its claim:
        """yaml
        - {containerName: main, resourceName: example.com/gpu, requestName: container-0-request-0}
        """

  Rule: KEP-5004/INIT-CONTAINERS  Init containers reuse the requests of the containers after them

    Scenario: An init container needing more than the long-lived containers asks only for the difference
      Given the Pod:
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
      Then pod "job" is bound to node "worker-1"
      And the claim of pod "job" has requests:
        """yaml
        - name: container-0-request-0
          exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}
        - name: container-1-request-0
          exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}
        """
      And pod "job" maps its extended resources to its claim:
        """yaml
        - {containerName: main, resourceName: example.com/gpu, requestName: container-1-request-0}
        - {containerName: warmup, resourceName: example.com/gpu, requestName: container-1-request-0}
        - {containerName: warmup, resourceName: example.com/gpu, requestName: container-0-request-0}
        """

    # A sidecar (an init container with restartPolicy Always) runs beside the containers after it, so its GPU is
    # never reused: with the node's two GPUs, a sidecar's one and the main container's one fit, one more does not.
    # A scheduler that treats the sidecar as an ordinary init container (reused by the main container) binds
    # the second row's pod.
    Scenario Outline: A sidecar asking for one GPU beside a main container asking for <main>: <verdict>
      Given the Pod:
        """yaml
        metadata: {name: job}
        spec:
          initContainers:
          - name: proxy
            image: registry.example/cuda:12
            restartPolicy: Always
            resources:
              limits: {example.com/gpu: "1"}
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "<main>"}
        """
      When the scheduler runs
      Then <outcome>

      Examples:
        | main | verdict                | outcome                                                  |
        | 1    | both GPUs are taken    | the claim of pod "job" is allocated devices "gpu-0, gpu-1" |
        | 2    | three do not fit       | pod "job" is not scheduled                               |

  Rule: KEP-5004/DEVICE-PLUGIN-FIRST  A node advertising the resource is served by its device plugin

    Scenario Outline: worker-1 advertises <advertised> example.com/gpu
      Given node "worker-1" advertises <advertised> "example.com/gpu" in its allocatable resources
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
        | advertised | outcome                                                                |
        | 4          | pod "trainer" is bound to node "worker-1" with no extended resource claim |
        | 1          | pod "trainer" is not scheduled                                         |
        | 0          | the claim of pod "trainer" is allocated devices "gpu-0, gpu-1"         |

  Rule: KEP-5004/RELEASED-WITH-POD  The claim goes with its pod and frees the devices

    Scenario: A second pod gets the GPUs once the first is deleted
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
      And the Pod:
        """yaml
        metadata: {name: second}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      When the scheduler runs
      Then pod "first" is bound to node "worker-1"
      And pod "second" is not scheduled
      When pod "first" is deleted
      And the scheduler runs
      Then the claims generated for pod "first" are gone
      And pod "second" is bound to node "worker-1"
      And the claim of pod "second" is allocated devices "gpu-0, gpu-1"

    # A finished pod stays until someone deletes it: a controller that lets the claim go only with its owner
    # passes the scenario above and keeps both GPUs for a pod that no longer runs.
    Scenario: A second pod gets the GPUs once the first has finished, though it is not deleted
      Given driver "gpu.example.com" takes over the devices of node "worker-1"
      And the Pod:
        """yaml
        metadata: {name: first}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      And the Pod:
        """yaml
        metadata: {name: second}
        spec:
          containers:
          - name: main
            image: registry.example/cuda:12
            resources:
              limits: {example.com/gpu: "2"}
        """
      When the scheduler runs
      Then pod "first" is bound to node "worker-1"
      And pod "second" is not scheduled
      When pod "first" finishes with phase "Succeeded"
      And the scheduler runs
      Then the claims generated for pod "first" are gone
      And pod "second" is bound to node "worker-1"
      And the claim of pod "second" is allocated devices "gpu-0, gpu-1"

  Rule: KEP-5004/GATE-OFF  Without DRAExtendedResource in the scheduler, no claim and no fit

    # The gate turned on by default at 1.36: a 1.35 scheduler left at its defaults has it off.
    Scenario Outline: kube-scheduler with DRAExtendedResource <gate>
      Given kube-scheduler version "<release>" with feature gates "<gates>"
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
      When the scheduler runs
      Then <outcome>

      Examples:
        | gate                 | release | gates                   | outcome                                   |
        | on                   | current | DRAExtendedResource=on  | pod "trainer" is bound to node "worker-1" |
        | off                  | current | DRAExtendedResource=off | pod "trainer" is not scheduled            |
        | off (1.35's default) | 1.35    | defaults                | pod "trainer" is not scheduled            |
        | on (1.36's default)  | 1.36    | defaults                | pod "trainer" is bound to node "worker-1" |

  Rule: KEP-5004/KUBELET-GATE-OFF  A kubelet without DRAExtendedResource prepares nothing for extended resources

    # The scheduler has the gate on (its default) and makes the claim; only the kubelet's setting changes. The
    # gate turned on by default at 1.36: a 1.35 kubelet left at its defaults has it off.
    Scenario Outline: A kubelet with DRAExtendedResource <gate> and a pod asking for example.com/gpu
      Given kubelet version "<release>" with feature gates "<gates>"
      And driver "gpu.example.com" takes over the devices of node "worker-1"
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
      When the scheduler runs
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "worker-1" was asked to prepare the claim of pod "trainer" <asked>

      Examples:
        | gate                 | release | gates                   | asked         |
        | on                   | current | DRAExtendedResource=on  | at least once |
        | off                  | current | DRAExtendedResource=off | never         |
        | off (1.35's default) | 1.35    | defaults                | never         |
