@kep-5963
Feature: What a DRA driver does about compatibility groups (KEP-5963 Driver Responsibilities, Troubleshooting)

  The driver under test is "gpu.example.com". It is given the devices it has as the ResourceSlices it
  would publish with every feature on; what it really publishes is read back from the API server. GPU
  gpu-0 on node "node-1" has 100 multiprocessors and two ways of being partitioned that cannot be in use
  at the same time: MIG partitions (group "mig") and vGPU partitions (group "vgpu"). The harness talks to
  the driver's kubelet plugin as the kubelet does, over gRPC on the plugin's unix socket.

  Background:
    Given a node "node-1"
    And the objects of manifest "classes.yaml"

  Rule: KEP-5963/DRIVER-OMITS-WHEN-GATE-OFF  A driver publishes compatibility groups only while the gate is on

    Scenario Outline: A driver that is "<driver>" <publishes> compatibility groups
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And dra-driver is "<driver>" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      Then ResourceSlice "node-1-devices" <stored slice> compatibility groups

      Examples:
        | driver        | publishes         | stored slice |
        | old           | never publishes   | declares no  |
        | new, gate off | does not publish  | declares no  |
        | new, gate on  | publishes         | declares     |

    Scenario: Turning the gate off at runtime makes the driver take the groups out of its slices
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And dra-driver is "new, gate on" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices:
        """yaml
        metadata: {name: node-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0
            counters:
              multiprocessors: {value: "100"}
        ---
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is not scheduled
      When dra-driver restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      Then ResourceSlice "node-1-devices" declares no compatibility groups
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"

    Scenario: Turning the gate on again brings the groups back
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And dra-driver is "new, gate off" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices:
        """yaml
        metadata: {name: node-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0
            counters:
              multiprocessors: {value: "100"}
        ---
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      Then ResourceSlice "node-1-devices" declares no compatibility groups
      When dra-driver restarts as "new, gate on" (DRADeviceCompatibilityGroups)
      Then device "mig-0" of ResourceSlice "node-1-devices" declares compatibility groups:
        """yaml
        gpu-0: [mig]
        """

  Rule: KEP-5963/DRIVER-KEEPS-GROUPS-OF-DEVICES-IN-USE  A driver does not regroup a device while it is allocated

    Scenario: A new declaration reaches an allocated device only once its allocation is released
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate on" (DRADeviceCompatibilityGroups)
      And dra-driver is "new, gate on" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      # The GPU's firmware now lets both kinds of partition run together: the driver regroups both devices.
      When driver "gpu.example.com" is given the devices:
        """yaml
        metadata: {name: node-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0
            counters:
              multiprocessors: {value: "100"}
        ---
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [shared], counters: {multiprocessors: {value: "20"}}}
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [shared], counters: {multiprocessors: {value: "50"}}}
        """
      Then device "mig-0" of ResourceSlice "node-1-devices" declares compatibility groups:
        """yaml
        gpu-0: [mig]
        """
      And device "vgpu-0" of ResourceSlice "node-1-devices" declares compatibility groups:
        """yaml
        gpu-0: [shared]
        """
      When pod "mig-user" is deleted
      And the scheduler runs
      Then device "mig-0" of ResourceSlice "node-1-devices" declares compatibility groups:
        """yaml
        gpu-0: [shared]
        """

    # With its gate off the driver has no groups to keep: a device in use is published without them as well,
    # before and after the regrouping, and so is the device that is not in use.
    Scenario: A driver with the gate off publishes no groups for a device in use either
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And dra-driver is "new, gate off" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And ResourceSlice "node-1-devices" declares no compatibility groups
      When driver "gpu.example.com" is given the devices:
        """yaml
        metadata: {name: node-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0
            counters:
              multiprocessors: {value: "100"}
        ---
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [shared], counters: {multiprocessors: {value: "20"}}}
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [shared], counters: {multiprocessors: {value: "50"}}}
        """
      Then ResourceSlice "node-1-devices" declares no compatibility groups
      And pod "mig-user" is bound to node "node-1"

  Rule: KEP-5963/DRIVER-VALIDATES-AT-PREPARE  A driver refuses, when preparing, an allocation its hardware cannot serve

    Scenario Outline: <cell>: the driver refuses the second of two incompatible allocations
      Given kube-apiserver is "<kube-apiserver>" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "<kube-scheduler>" (DRADeviceCompatibilityGroups)
      And dra-driver is "<dra-driver>" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      And a pod "vgpu-user" with a claim for one "vgpu" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And pod "vgpu-user" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "mig-user"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "vgpu-user"
      Then the driver prepared the claim of pod "mig-user" with device "mig-0"
      And the driver refused to prepare the claim of pod "vgpu-user"

      Examples:
        | cell                                      | kube-apiserver | kube-scheduler | dra-driver    |
        | Pre-KEP, the API server drops the field   | old            | new, gate on   | new, gate on  |
        | Pre-KEP, the driver leaves the field out  | new, gate on   | new, gate on   | new, gate off |
        | Driver-only, an older scheduler           | new, gate on   | old            | new, gate on  |

    Scenario: Once the incompatible device is unprepared, the other claim can be prepared
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "old" (DRADeviceCompatibilityGroups)
      And dra-driver is "new, gate on" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      And a pod "vgpu-user" with a claim for one "vgpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "mig-user"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "vgpu-user"
      Then the driver refused to prepare the claim of pod "vgpu-user"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "mig-user"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "vgpu-user"
      Then the driver prepared the claim of pod "vgpu-user" with device "vgpu-0"

    Scenario: One claim whose devices cannot be used together is refused as a whole
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "old" (DRADeviceCompatibilityGroups)
      And dra-driver is "new, gate on" (DRADeviceCompatibilityGroups)
      And driver "gpu.example.com" runs with the devices of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And the ResourceClaim:
        """yaml
        metadata: {name: both-kinds}
        spec:
          devices:
            requests:
            - name: mig
              exactly: {deviceClassName: mig}
            - name: vgpu
              exactly: {deviceClassName: vgpu}
        """
      And a pod "both-user" using claim "both-kinds"
      When the scheduler runs
      Then pod "both-user" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "both-kinds"
      Then the driver refused to prepare claim "both-kinds"
