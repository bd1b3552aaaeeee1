@api-validation
Feature: What the scheduler and drivers may write into a claim's status (resource.k8s.io/v1 ResourceClaimStatus)

  Background:
    Given the ResourceClaim "gpu-and-nic" from the manifests

  Rule: DRA-API/RESERVED-FOR-LIMITS  At most 256 consumers, each with resource, name and a UID of its own

    @shape:reserved-for:max @shape:reserved-for:over-max
    Scenario Outline: Reserving the claim for <count> pods
      When the user updates the status of ResourceClaim "gpu-and-nic" with "status.reservedFor" repeated <count> times:
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
        reservedFor:
        - {resource: pods, name: worker, uid: 6f1c2d3e-4b5a-4c6d-8e7f-000000000001}
        """
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                  |
        | 256   | accepted                                                                 |
        | 257   | rejected at "status.reservedFor" by rule "DRA-API/RESERVED-FOR-LIMITS"   |

    @shape:reserved-for:several @shape:reserved-for:duplicate
    Scenario Outline: Reserving the claim for <consumers>
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
        reservedFor: <reserved>
        """
      Then the request is <outcome>

      Examples:
        | consumers           | reserved                                                                       | outcome                                                                                  |
        | two pods            | [{resource: pods, name: a, uid: uid-a}, {resource: pods, name: b, uid: uid-b}] | accepted                                                                                 |
        | one pod twice       | [{resource: pods, name: a, uid: uid-a}, {resource: pods, name: a, uid: uid-a}] | rejected at "status.reservedFor[1]" by rule "DRA-API/RESERVED-FOR-LIMITS" as a duplicate |
        | a pod without a UID | [{resource: pods, name: a}]                                                    | rejected at "status.reservedFor[0].uid" by rule "DRA-API/RESERVED-FOR-LIMITS"            |

  Rule: DRA-API/RESERVED-FOR-NEEDS-ALLOCATION  Only an allocated claim is reserved

    Scenario Outline: Reserving a claim <state>
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        <allocation>
        reservedFor: [{resource: pods, name: trainer, uid: uid-trainer}]
        """
      Then the request is <outcome>

      Examples:
        | state            | allocation                                                                                        | outcome                                                                                |
        | that is allocated | allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}]}}   | accepted                                               |
        | that is not      | # no allocation                                                                                   | rejected at "status.reservedFor" by rule "DRA-API/RESERVED-FOR-NEEDS-ALLOCATION"       |

  Rule: DRA-API/ALLOCATION-IMMUTABLE  An allocation is set once, then only removed

    Scenario Outline: Rewriting an allocation of gpu-0 to <change>
      Given the ResourceClaim "gpu-and-nic" has the status:
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
        # a consumer no controller tracks, so that on a live cluster nothing deallocates the claim first
        reservedFor: [{apiGroup: example.com, resource: workloads, name: trainer, uid: uid-trainer}]
        """
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        <status>
        """
      Then the request is <outcome>

      Examples:
        | change          | status                                                                                                   | outcome                                                                     |
        | the same        | allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}]}}   | accepted                                                                  |
        | nothing         | {}                                                                                                       | accepted                                                                    |
        | another device  | allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-1}]}}   | rejected at "status.allocation" by rule "DRA-API/ALLOCATION-IMMUTABLE"    |

  Rule: DRA-API/ALLOCATION-RESULTS-MAX  At most 32 device results

    @shape:results:max @shape:results:over-max
    Scenario Outline: An allocation of <count> devices
      When the user updates the status of ResourceClaim "gpu-and-nic" with "status.allocation.devices.results" repeated <count> times:
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
        """
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                                     |
        | 32    | accepted                                                                                    |
        | 33    | rejected at "status.allocation.devices.results" by rule "DRA-API/ALLOCATION-RESULTS-MAX"    |

  Rule: DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS  Results name a request, or the chosen subrequest of a list

    Scenario Outline: A result for request "<request>"
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: "<request>", driver: gpu.example.com, pool: node-1, device: dev-0}
        """
      Then the request is <outcome>

      Examples:
        | request  | outcome                                                                                                               |
        | gpu      | accepted                                                                                                              |
        | nic/fast | accepted                                                                                                              |
        | tpu      | rejected at "status.allocation.devices.results[0].request" by rule "DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS"    |
        | gpu/fast | rejected at "status.allocation.devices.results[0].request" by rule "DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS"    |

      # Upstream knows a firstAvailable request's own name whatever its subrequests (the rule's upstream_divergences).
      @upstream-differs:result-names-subrequest-parent
      Examples: the parent of subrequests, which upstream accepts
        | request | outcome                                                                                                            |
        | nic     | rejected at "status.allocation.devices.results[0].request" by rule "DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS" |

  Rule: DRA-API/DEVICE-STATUS-MATCHES-ALLOCATION  Per-device status only for allocated devices, one entry each

    Scenario Outline: A driver reports on <reported>
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices: <entries>
        """
      Then the request is <outcome>

      Examples:
        | reported              | entries                                                                                                          | outcome                                                                                           |
        | the allocated device  | [{driver: gpu.example.com, pool: fabric, device: gpu-0}]                                                         | accepted                                                                                          |
        | another device        | [{driver: gpu.example.com, pool: fabric, device: gpu-1}]                                                         | rejected at "status.devices[0]" by rule "DRA-API/DEVICE-STATUS-MATCHES-ALLOCATION"                |
        | the same device twice | [{driver: gpu.example.com, pool: fabric, device: gpu-0}, {driver: gpu.example.com, pool: fabric, device: gpu-0}] | rejected at "status.devices[1]" by rule "DRA-API/DEVICE-STATUS-MATCHES-ALLOCATION" as a duplicate |

  Rule: DRA-API/DEVICE-STATUS-CONDITIONS  At most 8 well-formed conditions per device, one per type

    Scenario Outline: A device with <count> conditions
      When the user updates the status of ResourceClaim "gpu-and-nic" with "status.devices[0].conditions" repeated <count> times:
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - driver: gpu.example.com
          pool: fabric
          device: gpu-0
          conditions:
          - {type: gpu.example.com/attached, status: "True", reason: Attached, lastTransitionTime: "2026-01-01T00:00:00Z"}
        """
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                                   |
        | 8     | accepted                                                                                  |
        | 9     | rejected at "status.devices[0].conditions" by rule "DRA-API/DEVICE-STATUS-CONDITIONS"     |

    Scenario Outline: A condition <condition>
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - driver: gpu.example.com
          pool: fabric
          device: gpu-0
          conditions: [<condition>]
        """
      Then the request is <outcome>

      Examples:
        | condition                                                                                                  | outcome                                                                                             |
        | {type: gpu.example.com/attached, status: "False", reason: Pending, lastTransitionTime: "2026-01-01T00:00:00Z"} | accepted                                                                                       |
        | {type: gpu.example.com/attached, status: Maybe, reason: Pending, lastTransitionTime: "2026-01-01T00:00:00Z"}   | rejected at "status.devices[0].conditions[0].status" by rule "DRA-API/DEVICE-STATUS-CONDITIONS" |
        | {type: gpu.example.com/attached, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z"}                   | rejected at "status.devices[0].conditions[0].reason" by rule "DRA-API/DEVICE-STATUS-CONDITIONS" |

  Rule: DRA-API/DEVICE-STATUS-DATA  Device data is a JSON object of at most 10 KiB

    Scenario Outline: Device data of <length> characters of text
      When the user updates the status of ResourceClaim "gpu-and-nic" with "status.devices[0].data.blob" padded with "x" to <length> characters:
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - {driver: gpu.example.com, pool: fabric, device: gpu-0, data: {blob: ""}}
        """
      Then the request is <outcome>

      Examples:
        | length | outcome                                                                          |
        | 10229  | accepted                                                                         |
        | 10230  | rejected at "status.devices[0].data" by rule "DRA-API/DEVICE-STATUS-DATA"        |

    Scenario Outline: Device data that is <what>
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - {driver: gpu.example.com, pool: fabric, device: gpu-0, data: <data>}
        """
      Then the request is <outcome>

      Examples:
        | what      | data              | outcome                                                                     |
        | an object | {uuid: GPU-1234}  | accepted                                                                    |
        | a list    | [GPU-1234]        | rejected at "status.devices[0].data" by rule "DRA-API/DEVICE-STATUS-DATA"   |

    # With the gate off kube-apiserver drops status.devices before it validates (upstream's
    # dropDisabledDRAResourceClaimDeviceStatusFields).
    Scenario Outline: With DRAResourceClaimDeviceStatus off in kube-apiserver, device data that is <what> is dropped
      Given kube-apiserver with feature gates "DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off"
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - {driver: gpu.example.com, pool: fabric, device: gpu-0, data: <data>}
        """
      Then the request is accepted
      And the stored ResourceClaim "gpu-and-nic" has no field "status.devices"

      Examples:
        | what      | data             |
        | an object | {uuid: GPU-1234} |
        | a list    | [GPU-1234]       |

  Rule: DRA-API/COMPATIBILITY-SNAPSHOT  The allocation's group snapshot keys counter sets and keeps the slice limits

    Scenario Outline: A snapshot <snapshot>
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - request: gpu
              driver: gpu.example.com
              pool: node-1
              device: gpu-0-mig-1g-0
              compatibilityGroups: <snapshot>
        """
      Then the request is <outcome>

      Examples:
        | snapshot                                    | outcome                                                                                                                            |
        | {gpu-0-counters: [mig], gpu-1-counters: []} | accepted                                                                                                                           |
        | {gpu-0-counters: [mig, vgpu, x]}            | rejected at "status.allocation.devices.results[0].compatibilityGroups[gpu-0-counters]" by rule "DRA-API/COMPATIBILITY-SNAPSHOT"    |
        | {gpu-0-counters: [Mig]}                     | rejected at "status.allocation.devices.results[0].compatibilityGroups[gpu-0-counters][0]" by rule "DRA-API/COMPATIBILITY-SNAPSHOT" |
        | {GPU-0: [mig]}                              | rejected at "status.allocation.devices.results[0].compatibilityGroups" by rule "DRA-API/COMPATIBILITY-SNAPSHOT"                    |

  Rule: DRA-API/STATUS-ON-CREATE  A status written with a new claim is dropped, not validated

    Scenario: A saved copy of a live claim, status included, is created without its status
      When the user creates the ResourceClaim:
        """yaml
        metadata: {name: copied}
        spec:
          devices:
            requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
        status:
          reservedFor: [{resource: pods, name: trainer, uid: "1234"}]
        """
      Then the request is accepted
      And the stored ResourceClaim "copied" has field "status" set to {}
