"""CVRR-ES's 11 evaluation dimensions (seeds/003 §3.1; SPEC §4 "Dimensions"): their keys, names and the
default texts the curation steps use for each.

`DIMENSIONS` maps each key (the release's folder name) to the paper's name of the dimension; the
evaluation reads it from here. `DEFAULTS` holds, per key, the texts a new `CategoryDefinition` row
starts with (`annotation.benchmarks.cvrr.dimension_records.ensure_dimensions`), which curators then
edit on the dimensions page:

- `description`: the paper's definition of the dimension (§3.1), in its own words where it gives them;
- `caption`: the caption guideline annotators follow for a video of the dimension. The paper says
  that "personalized annotation guidelines are used for each video category" and that captions are
  written from the source dataset's captions or metadata where they exist (§3.2 Stage 1), but does
  not print the guidelines (its Appendix C is not part of the text); each guideline here is written
  from the dimension's definition: it asks for the details a question of the dimension will need;
- `qa`: the instruction given to the language model that proposes QA pairs from the caption. The
  paper curates "specific prompts for each evaluation dimension" covering reasoning and robustness
  (misleading or confusing) questions (§3.2 Stage 2) and shows examples only in a figure that is not
  part of the text (Fig. 14); each instruction here is written from the dimension's definition and
  the paper's description of the two kinds of questions.
"""

# key (the release's folder name) → the paper's name of the dimension (§3.1), in the paper's order
DIMENSIONS: dict[str, str] = {
    "multiple_actions_in_a_single_video": "Multiple actions in a single video",
    "fine_grained_action_understanding": "Fine-grained action understanding",
    "partial_actions": "Partial actions",
    "time_order_understanding": "Time order understanding",
    "non_existent_actions_with_existent_scene_depictions":
        "Non-existent actions with existent scene depictions",
    "non_existent_actions_with_non_existent_scene_depictions":
        "Non-existent actions with non-existent scene depictions",
    "continuity_and_object_instance_count": "Continuity and object instance count",
    "unusual_and_physically_anomalous_activities": "Unusual and physically anomalous activities",
    "interpretation_of_social_context": "Interpretation of social context",
    "understanding_emotional_context": "Understanding of emotional context",
    "interpretation_of_visual_context": "Interpretation of visual context",
}

# what every caption guideline asks, whatever the dimension (§3.2 Stage 1)
CAPTION_COMMON = (
    "Write one detailed caption of the whole video in plain sentences, in the order things happen. "
    "Describe only what can be seen (and heard): no guesses presented as facts. Where the video came with "
    "captions or metadata from its dataset, start from them, correct them against the video and complete them."
)

# what every QA instruction asks, whatever the dimension (§3.2 Stage 2 and Stage 3)
QA_COMMON = (
    "You are given the detailed ground-truth caption of a video. Write open-ended question-answer pairs about "
    "the video, answerable from the caption alone, of two kinds: reasoning questions, which go beyond "
    "describing the scene and need logical inference, contextual understanding or reasoning about "
    "counterfactual and hypothetical situations; and robustness questions, which are misleading or confusing "
    "(they assume something the video does not show), whose answer corrects the question instead of "
    "inventing content. A question must never contain its own answer. Answers are short and factual."
)

DEFAULTS: dict[str, dict[str, str]] = {
    "multiple_actions_in_a_single_video": {
        "description": "Videos with 2-4 different human activities. Questions assess the model's ability to "
                       "understand and reason about multiple actions and their interrelations in a single video.",
        "caption": "Name every distinct human activity in the video (usually two to four), who performs each, "
                   "in what order or at the same time, and how the activities relate to one another (one "
                   "causing, enabling or interrupting another).",
        "qa": "Ask about the several actions in the video and their interrelations: which actions happen, in "
              "what order, why one follows another, what would change if one did not happen. Robustness "
              "questions may name an action that is not in the video or merge two actions into one.",
    },
    "fine_grained_action_understanding": {
        "description": "Videos of fine-grained activities performed by humans, such as pushing, opening, "
                       "closing, spreading, sitting. Carefully crafted questions test the model's ability to "
                       "interpret subtle and fine-grained actions.",
        "caption": "Describe each action precisely with the exact verb (pushing rather than moving, opening "
                   "rather than touching), the object acted on, the hand or body part used, the direction of "
                   "the motion and its outcome.",
        "qa": "Ask about the exact nature of the subtle actions: which precise action is performed on which "
              "object, how, and with what result, so that a similar but different action (pulling instead of "
              "pushing, closing instead of opening) would be a wrong answer. Robustness questions may presume "
              "a neighbouring action that does not happen.",
    },
    "partial_actions": {
        "description": "Videos with actions likely to be followed by other actions that are not shown in the "
                       "video, e.g. cracking an egg in a kitchen suggests the next action of cooking the egg. "
                       "Video-LMMs tend to describe what is likely to occur next rather than what is shown.",
        "caption": "Describe exactly where the action stops when the video ends, and state explicitly which "
                   "follow-up actions one might expect but the video does not show.",
        "qa": "Ask about what the video shows up to its end, and whether the likely next action happens. "
              "Robustness questions presume the follow-up action that the video does not show (e.g. ask how "
              "the egg was cooked when it is only cracked); their answer says that it is not shown.",
    },
    "time_order_understanding": {
        "description": "Videos of fine-grained actions occurring in a particular temporal direction, with "
                       "challenging questions on the temporal sequence of activities (e.g. telling pushing "
                       "from pulling).",
        "caption": "Give the exact temporal order of the actions and the direction of each motion (towards or "
                   "away from the camera, left to right, up or down, into or out of something), with the "
                   "state of the objects at the start and at the end.",
        "qa": "Ask about the order of events and the direction of the actions: what happens first, before or "
              "after what, in which direction an object moves, whether the video could be played backwards. "
              "Robustness questions may state the order or the direction the wrong way round.",
    },
    "non_existent_actions_with_existent_scene_depictions": {
        "description": "Examines robustness and reasoning when questions introduce non-existent activities into "
                       "the video without altering its physical and spatial scene or environmental details.",
        "caption": "Describe the scene thoroughly (place, objects, people and their attributes, background) and "
                   "list exactly the actions that do happen, so that actions which do not happen can be told "
                   "apart.",
        "qa": "Write questions that keep the real scene, objects and people of the video but ask about an "
              "action that does not happen in it; the answer states that the action does not occur and says "
              "what happens instead. Add a few reasoning questions about the actions that do occur.",
    },
    "non_existent_actions_with_non_existent_scene_depictions": {
        "description": "Questions contain both non-existent activities and non-existent scenes: details of "
                       "objects, attributes and background are altered. Tests whether the model corrects "
                       "misleading questions and avoids generating imaginary content.",
        "caption": "Describe the objects with their attributes (colours, number, materials), the people, the "
                   "background and the actions precisely, so that altered objects, attributes or scenes can be "
                   "recognised as not in the video.",
        "qa": "Write questions that ask about an action that does not happen in a scene that is not the "
              "video's (altered objects, attributes or background); the answer corrects both the action and "
              "the scene from the caption. Add a few reasoning questions about what is really shown.",
    },
    "continuity_and_object_instance_count": {
        "description": "Videos (real-world and simulations) that test the ability to recognise the number of "
                       "instances of objects, people, etc., and to tell existing objects from new ones introduced "
                       "later in the same scene.",
        "caption": "Count the instances of each kind of object and person, say when each one appears, "
                   "disappears or reappears, and whether an object seen later is the same one or a new one.",
        "qa": "Ask how many instances of objects or people appear, whether an object seen later is the same "
              "or a new one, and what changes in the scene over time. Robustness questions may presume a wrong "
              "count or an object that never appears.",
    },
    "unusual_and_physically_anomalous_activities": {
        "description": "Videos depicting unusual actions that seemingly defy the laws of physics, such as a person "
                       "floating in the air or driving a motorbike on a running river; tests generalisation to "
                       "out-of-distribution videos.",
        "caption": "Describe what is unusual or physically anomalous exactly as it is shown, without explaining "
                   "it away, and how the people and objects around it behave.",
        "qa": "Ask about the unusual or physically impossible activity and what makes it unusual, and reason "
              "about it as it is shown. Robustness questions may presume the ordinary version of the activity; "
              "the answer describes what the video actually shows.",
    },
    "interpretation_of_social_context": {
        "description": "Actions influenced by social context, such as helping an elderly person cross the road; "
                       "assesses whether the model infers the rationale behind actions from the social context.",
        "caption": "Describe the people, their relationships and roles as far as they can be seen, the social "
                   "setting, and the actions with the visible cues that explain why they are done.",
        "qa": "Ask why people act as they do given the social context, and what the context implies about "
              "their intentions. Robustness questions may attribute a motive or a relationship the video "
              "contradicts.",
    },
    "understanding_emotional_context": {
        "description": "Actions understood through their emotional context, e.g. a person crying due to joy; tests "
                       "whether the model interprets actions based on the emotional context.",
        "caption": "Describe the facial expressions, gestures, voices and reactions of the people, the event that "
                   "causes them, and the emotion the whole context shows (which may differ from the first "
                   "impression, like tears of joy).",
        "qa": "Ask which emotion people feel and why, reading the whole context rather than a single "
              "expression. Robustness questions may presume the opposite or a misleading emotion.",
    },
    "interpretation_of_visual_context": {
        "description": "Tests whether the model understands actions by leveraging the overall visual contextual "
                       "cues in the video; e.g. identifying the number of people from their shadows.",
        "caption": "Describe the visual cues of the scene beyond its main subjects (shadows, reflections, signs, "
                   "weather, lighting, what is partly hidden) and what each cue reveals about the actions.",
        "qa": "Ask questions whose answer needs the visual context cues (shadows, reflections, signs, "
              "surroundings) rather than the main subject alone. Robustness questions may presume something "
              "the cues contradict.",
    },
}

def default_texts(key: str) -> dict:
    """The fields a dimension's definition starts with: name, description, and its instructions per
    curation step (`caption`: the guideline with the common part; `qa`: the common part with the
    dimension's)."""
    texts = DEFAULTS[key]
    return {"name": DIMENSIONS[key], "description": texts["description"],
            "instructions": {"caption": f"{texts['caption']}\n\n{CAPTION_COMMON}",
                             "qa": f"{QA_COMMON}\n\nFor this dimension: {texts['qa']}"}}
