"""Prompting strategies shared by every benchmark: standard, chain of thought, and DSCP.

A benchmark module writes the user prompt of a request (its question with the paper's answer
instructions); `apply` turns it into what the strategy sends:

- `standard`: the prompt as it is;
- `cot`: the prompt followed by "Let's think step by step:" (C-VQA Table 4, BlackSwan §7.2);
- `dscp` (CVRR-ES §4, Figure 3): two calls on the same media. Step 1 asks "What is happening in the
  video?" under ten guidelines; step 2 asks the question with the step-1 answer as context. The
  request carries step 1 as `context_prompt` and step 2 as `prompt` with a `{context}` slot that
  the runner fills with step 1's answer (`EvalRequest.prompt_with_context`);
- `dscp_stage1`: one call, the ten guidelines prefixed to the user question (CVRR-ES Table 3).

BlackSwan's +P / +PC add human captions to the prompt: the BlackSwan module builds those itself
and then applies `standard` or `cot` here.
"""

from __future__ import annotations

STRATEGIES = ("standard", "cot", "dscp", "dscp_stage1", "plus_p", "plus_pc")

COT_SUFFIX = "Let's think step by step:"

DSCP_GUIDELINES = """As an intelligent video comprehension model, focus on these guidelines:
1. Differentiate recurring objects, count accurately, and identify movements and poses.
2. Understand directional movements and temporal order.
3. Pay attention to fine-grained actions with precision.
4. Assess incomplete actions without assuming completion.
5. Detect emotional, social, and visual cues.
6. Capture and analyze all relevant actions.
7. Identify unusual actions accurately.
8. Disagree with incorrect information given in question.
9. If you do not find the evidence in the frames, you can give a definite answer by assuming that the asked \
action/attribute is not present.
10. Provide to the point and concise response.
Now, proceed with answering the following question faithfully while keeping above guidelines in mind:
"""

DSCP_STEP1 = DSCP_GUIDELINES + "Question: What is happening in the video?"

DSCP_STEP2 = ("Context for the given video is: {context}. Now answer a question truthfully based on the video "
              "and the provided context.\nQuestion: ")

CONTEXT_SLOT = "{context}"


def apply(prompt: str, strategy: str) -> tuple[str, str]:
    """(prompt, context_prompt) under a strategy; `context_prompt` is empty unless it needs two calls.

    For `dscp` the returned prompt holds the `{context}` slot; every other brace is doubled
    nowhere: the runner replaces the slot literally (`str.replace`), so prompts may contain braces.
    """
    if strategy in ("standard", "plus_p", "plus_pc"):
        return prompt, ""
    if strategy == "cot":
        return f"{prompt}\n{COT_SUFFIX}", ""
    if strategy == "dscp":
        return DSCP_STEP2 + prompt, DSCP_STEP1
    if strategy == "dscp_stage1":
        return f"{DSCP_GUIDELINES}Question: {prompt}", ""
    raise ValueError(f"Unknown prompting strategy {strategy!r}; known: {', '.join(STRATEGIES)}.")


def fill_context(prompt: str, context: str) -> str:
    return prompt.replace(CONTEXT_SLOT, context.strip())
